/// What the session runner must do in response to an input of `SessionStateMachine`, in order.
public enum SessionAction: Hashable, Sendable {
    /// Open or resume the conversation and create the provider instance; then send `session`.
    case begin(StartRequest)
    /// Decoded mono samples at the client's sample rate, continuing the timeline.
    case audio(samples: [Float])
    /// One Opus packet (encoding `opus`), already checked by its framing: it decodes to `sampleCount`
    /// samples at the client's sample rate, continuing the timeline. The runner decodes it.
    case encodedAudio(packet: [UInt8], sampleCount: Int)
    case words(WordsMessage)
    case segments([DeviceSegment])
    /// Give `speaker` (a session label) the display name `name`; "" clears it.
    case renameSpeaker(speaker: String, name: String)
    /// Move every word of `from` to `into` (session labels).
    case mergeSpeakers(from: String, into: String)
    /// Flush provider, merger and store; send the last transcript with `final: true`; then call
    /// `finalizeCompleted()`.
    case finalize
    case send(ServerMessage)
    /// Close the WebSocket with this code; `reason` is a short ASCII string (an error code or "finalized").
    case close(code: UInt16, reason: String)
    /// The session ended without finalize: flush what is pending to the store, release the provider,
    /// leave the conversation resumable. Emitted at most once, and only after `.begin`.
    case teardown(SessionEndReason)
}

/// Why a session ended without a finalize.
public enum SessionEndReason: Hashable, Sendable {
    case peerClosed
    case idleTimeout
    case error(ProtocolErrorCode)
}
