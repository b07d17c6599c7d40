/// One speaker turn from a provider instance (a `speakersync_turn_t` the host validated).
///
/// A turn whose `turnID` was seen before replaces the earlier one; `isRemoved` withdraws it.
public struct ProviderTurn: Sendable, Hashable {
    /// Unique within the instance; re-sent for revisions.
    public var turnID: UInt64
    /// Provider-local speaker index, stable within the instance.
    public var speaker: Int32
    public var startSeconds: Double
    public var endSeconds: Double
    /// In [0, 1].
    public var confidence: Double
    /// The provider withdrew this turn id; times are meaningless.
    public var isRemoved: Bool

    public init(
        turnID: UInt64, speaker: Int32, startSeconds: Double, endSeconds: Double, confidence: Double,
        isRemoved: Bool = false
    ) {
        self.turnID = turnID
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
        self.isRemoved = isRemoved
    }
}
