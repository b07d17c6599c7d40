import SpeakerSyncClient

extension SessionStats {
    /// The figures of a `stats` message's JSON text, read with the protocol's own decoder; nil when the
    /// text is not a `stats` message.
    public init?(statsMessage text: String) {
        guard case .stats(let stats)? = try? ServerMessageDecoder().decode(text) else { return nil }
        self = stats
    }
}
