/// A span of audio attributed to one speaker by a diarization provider (or by the device).
///
/// `id` is the provider's handle for the turn: re-sending a turn with the same id revises it.
/// `speaker` is opaque to the merger (the server passes session labels such as "Speaker 1").
public struct SpeakerTurn: Hashable, Sendable {
    public var id: String
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var confidence: Double?

    public init(id: String, speaker: String, startSeconds: Double, endSeconds: Double, confidence: Double? = nil) {
        self.id = id
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
    }
}
