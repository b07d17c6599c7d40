/// A stretch of time, in seconds: a scored region of a UEM, a collar, an overlap region.
public struct TimeSpan: Sendable, Hashable {
    public var startSeconds: Double
    public var endSeconds: Double

    public init(startSeconds: Double, endSeconds: Double) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    public var durationSeconds: Double { Swift.max(0, endSeconds - startSeconds) }
}
