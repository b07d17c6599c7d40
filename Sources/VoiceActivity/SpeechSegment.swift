/// A stretch of detected speech on the stream's timeline: seconds since the first sample given to the
/// detector (or since its last `reset()`).
public struct SpeechSegment: Hashable, Sendable {
    public var startSeconds: Double
    public var endSeconds: Double

    public init(startSeconds: Double, endSeconds: Double) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    public var durationSeconds: Double { endSeconds - startSeconds }
}
