/// One speaker turn: who spoke from when to when, in seconds from the start of the recording.
///
/// A turn whose end is not after its start (or that lasts a microsecond or less) holds no speech and is
/// ignored by every metric, as pyannote.core ignores empty segments.
public struct SpeakerSegment: Sendable, Hashable {
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double

    public init(speaker: String, startSeconds: Double, endSeconds: Double) {
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    public var durationSeconds: Double { Swift.max(0, endSeconds - startSeconds) }
}
