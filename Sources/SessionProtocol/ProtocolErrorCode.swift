/// Stable, snake_case error codes sent in `error` frames. Clients switch on these strings, so a code is
/// never renamed or reused for another meaning; new codes may be added.
public enum ProtocolErrorCode: String, CaseIterable, Hashable, Sendable {
    case malformedJSON = "malformed_json"
    case unknownType = "unknown_type"
    case missingField = "missing_field"
    case invalidField = "invalid_field"
    case audioBeforeStart = "audio_before_start"
    case alreadyStarted = "already_started"
    case notStarted = "not_started"
    case unsupportedEncoding = "unsupported_encoding"
    case unsupportedSampleRate = "unsupported_sample_rate"
    case invalidTimestamp = "invalid_timestamp"
    case tooManyWords = "too_many_words"
    case frameTooLarge = "frame_too_large"
    case unknownProvider = "unknown_provider"
    case unknownSpeaker = "unknown_speaker"
    case invalidConversationID = "invalid_conversation_id"
    case sessionFinalized = "session_finalized"
    case idleTimeout = "idle_timeout"
    case storageUnavailable = "storage_unavailable"
    case providerFailed = "provider_failed"
    case internalError = "internal_error"
    /// The provider refused the start's `options` (an unknown key, a value out of range): the client's
    /// mistake, so it closes like an invalid start field rather than as a provider failure.
    case invalidOptions = "invalid_options"
    /// The provider is held back after crashing repeatedly (or its worker cannot start): nothing is wrong
    /// with the start, so it closes with 4001 (try again later, or with another provider), and the
    /// message says for how long.
    case providerUnavailable = "provider_unavailable"
    /// The start names a device other than the one the connection's device token belongs to.
    case deviceMismatch = "device_mismatch"
    /// The token (or admin key) the connection was opened with was revoked: the session ends at once
    /// (close 4003); what was stored stays, and a new valid credential may resume the conversation.
    case credentialRevoked = "credential_revoked"
    /// The start would exceed the device's concurrent session limit (close 4029; retry when one ends).
    case tooManySessions = "too_many_sessions"
    /// The start names an existing conversation of another device (close 1007). Conversation ids are
    /// global, so this says such an id exists; ids are random UUIDs unless a client chooses its own
    /// (docs/security.md says what that reveals). Nothing else about the conversation is revealed.
    case conversationNotFound = "conversation_not_found"
    /// A binary message of an `opus` session is not a valid Opus packet (empty, framing that breaks
    /// RFC 6716's rules, more than 120 ms). The packet is dropped and the session goes on, as a device
    /// on a lossy link would rather lose 20 ms than the meeting.
    case invalidAudio = "invalid_audio"
    /// A `words` message in a session whose start asked the server to recognise the words
    /// (`asr: "server"`): two recognisers would put two transcripts on one timeline. The message is
    /// dropped; the server's own words go on.
    case asrConflict = "asr_conflict"
    /// The start asked for `asr: "server"` but this server cannot recognise speech (its PocketSphinx
    /// model is not installed or does not load). Nothing is wrong with the start otherwise: start again
    /// with `asr: "device"`, or on a server that has the model.
    case asrUnavailable = "asr_unavailable"
    /// A string holds text PostgreSQL cannot store: U+0000 (NUL), bytes that are not UTF-8, or a lone
    /// surrogate. The message names the field. Refused where it arrives, so nothing past the edge ever
    /// sees it: the message is dropped (nothing of it is stored or acknowledged), and a start with
    /// such a field is rejected.
    case invalidText = "invalid_text"
    /// PostgreSQL refused one of the session's writes for a reason retrying cannot fix (the message
    /// names what was refused). The session ends: what was acknowledged `stored` before stays stored;
    /// nothing after the refused write is acknowledged.
    case storageRejected = "storage_rejected"
    /// The server is stopping (SIGTERM, a deploy): what the session had is stored and acknowledged,
    /// and the connection closes with 1001. Reconnect with the same conversation_id to resume.
    case serverStopping = "server_stopping"
    /// The client did not read what the server sent: more than the outgoing limit stayed unread
    /// past the grace period. The connection closes with 4008; what was acknowledged stays stored.
    case slowReader = "slow_reader"
    /// `store_audio` is not honoured (any more): the device's stored-audio quota is used up, or the
    /// server's disk is nearly full. The session goes on; its words are stored, its audio is not.
    case audioNotStored = "audio_not_stored"
    /// The conversation was resumed on another connection (this server's or another's behind a load
    /// balancer): this session stored what it had, or, if it had already lost the conversation (cut
    /// off from PostgreSQL or paused past its lease), stores nothing more. Close 4009. The other
    /// connection goes on; words this one did not see acknowledged are the other's to send.
    case resumedElsewhere = "resumed_elsewhere"
    /// The start resumes a conversation that another server is still running and did not hand over
    /// within the start's wait. Nothing was started or acknowledged; retry (close 4013).
    case conversationBusy = "conversation_busy"

    /// What the session does after sending this error.
    ///
    /// `rejectingStart` is true when the error rejects the session's start (the `start` message or the
    /// upgrade URL's query). A session cannot run on a start it could not understand, and a device
    /// typically streams audio right after its start without waiting for the reply, so that audio would
    /// be silently dropped; a rejected start therefore closes the session. The same codes on any other
    /// message only drop that message.
    public func disposition(rejectingStart: Bool = false) -> ErrorDisposition {
        switch self {
        case .malformedJSON, .unknownType, .audioBeforeStart, .alreadyStarted, .notStarted,
            .invalidTimestamp, .tooManyWords, .unknownSpeaker, .sessionFinalized, .invalidAudio,
            .asrConflict, .audioNotStored:
            return .continues
        case .missingField, .invalidField, .invalidText:
            return rejectingStart ? .closes(CloseCode.invalidPayload) : .continues
        case .storageUnavailable:
            // At the start: the conversation could not be created or loaded in time; nothing was
            // started or acknowledged, and the device tries again later. Later: updates go on with
            // `stored: false` until the writes succeed again.
            return rejectingStart ? .closes(CloseCode.tryAgainLater) : .continues
        case .storageRejected:
            return .closes(CloseCode.internalError)
        case .resumedElsewhere:
            return .closes(CloseCode.resumedElsewhere)
        case .conversationBusy:
            return .closes(CloseCode.tryAgainLater)
        case .serverStopping:
            return .closes(CloseCode.goingAway)
        case .slowReader:
            return .closes(CloseCode.slowReader)
        case .invalidConversationID, .invalidOptions, .conversationNotFound:
            return .closes(CloseCode.invalidPayload)
        case .deviceMismatch:
            return .closes(CloseCode.policyViolation)
        case .credentialRevoked:
            return .closes(CloseCode.credentialRevoked)
        case .tooManySessions:
            return .closes(CloseCode.tooManySessions)
        case .unsupportedEncoding, .unsupportedSampleRate:
            return .closes(CloseCode.unsupportedData)
        case .unknownProvider:
            return .closes(CloseCode.policyViolation)
        case .frameTooLarge:
            return .closes(CloseCode.messageTooBig)
        case .idleTimeout:
            return .closes(CloseCode.idleTimeout)
        case .providerFailed, .internalError:
            return .closes(CloseCode.internalError)
        case .providerUnavailable, .asrUnavailable:
            return .closes(CloseCode.providerUnavailable)
        }
    }
}

/// Whether a session survives an error.
public enum ErrorDisposition: Hashable, Sendable {
    /// The offending message (or frame) is dropped; the session goes on.
    case continues
    /// The server sends the error frame (with `fatal: true`) and then closes with this close code.
    case closes(UInt16)

    public var isFatal: Bool {
        if case .closes = self { return true }
        return false
    }

    public var closeCode: UInt16? {
        if case .closes(let code) = self { return code }
        return nil
    }
}
