/// One word as the device's ASR reports it: text and its time span on the session's audio timeline.
public struct Word: Hashable, Sendable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    /// ASR confidence in [0, 1] when the recognizer gives one.
    public var confidence: Double?

    public init(text: String, startSeconds: Double, endSeconds: Double, confidence: Double? = nil) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
    }
}
