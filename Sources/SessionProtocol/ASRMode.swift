/// Who recognises the session's words: the `start` field `asr`.
public enum ASRMode: String, CaseIterable, Hashable, Sendable {
    /// The device sends `words` messages from its own recogniser (the default).
    case device
    /// The server recognises the session's audio itself (PocketSphinx) and merges those words as if
    /// the device had sent them; the device sends audio only, and a `words` message is `asr_conflict`.
    case server
}
