/// Everything needed to rebuild a manager's database, e.g. to keep a conversation's speakers across a
/// device reconnect. Codable; `restore` validates it as strictly as any other input.
public struct SpeakerManagerSnapshot: Hashable, Sendable, Codable {
    /// Bumped when the encoding changes incompatibly; `restore` refuses versions it does not know.
    public static let currentFormatVersion = 1

    public var formatVersion: Int
    public var embeddingDimension: Int
    /// Sorted by id, so equal databases give equal snapshots.
    public var speakers: [Speaker]
    /// The number the next created speaker gets, so restored sessions do not reuse ids.
    public var nextSpeakerNumber: Int
    /// The number the next unlabelled segment gets.
    public var nextSegmentNumber: UInt64

    public init(
        formatVersion: Int = SpeakerManagerSnapshot.currentFormatVersion, embeddingDimension: Int,
        speakers: [Speaker], nextSpeakerNumber: Int, nextSegmentNumber: UInt64
    ) {
        self.formatVersion = formatVersion
        self.embeddingDimension = embeddingDimension
        self.speakers = speakers
        self.nextSpeakerNumber = nextSpeakerNumber
        self.nextSegmentNumber = nextSegmentNumber
    }
}
