/// One frame of speech as the diarizer holds it: its span, the audio its embedding came from, and
/// the speaker it has now (online, or after finalize the re-clustered one). For analysis and tuning:
/// `speakersync-bench diarize --dump` writes these so clustering can be studied without re-embedding.
public struct DiarizerFrame: Sendable, Hashable {
    public var startSeconds: Double
    public var endSeconds: Double
    /// Seconds of audio the embedding was computed from (0 for a frame never embedded).
    public var windowSeconds: Double
    public var embedding: [Float]?
    public var speaker: Int32?
}
