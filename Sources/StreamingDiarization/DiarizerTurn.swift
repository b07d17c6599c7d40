/// A turn the diarizer publishes: `id` is stable while the turn exists; the same id with new values
/// revises it; `isRemoved` withdraws it.
public struct DiarizerTurn: Sendable, Hashable {
    public var id: UInt64
    public var speaker: Int32
    public var startSeconds: Double
    public var endSeconds: Double
    public var confidence: Float
    public var isRemoved: Bool

    public init(id: UInt64, speaker: Int32, startSeconds: Double, endSeconds: Double, confidence: Float, isRemoved: Bool = false) {
        self.id = id
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
        self.isRemoved = isRemoved
    }
}
