#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A tracked speaker's profile. A value: the manager hands out copies, and changes go through the manager
/// (`renameSpeaker`, `upsertSpeaker`, …) so they stay atomic with everything else it does.
public struct Speaker: Identifiable, Hashable, Sendable, Codable {
    /// "1", "2", … for speakers the manager creates; any non-empty string for known speakers.
    public let id: String
    /// Display name: "Speaker N" for created speakers, the id for upserted ones unless given.
    public var name: String
    /// Unit-length profile: an exponential moving average of confident segment embeddings, or the mean of
    /// the raw history after a merge or reassignment.
    public var currentEmbedding: [Float]
    /// Total speech attributed to the speaker.
    public var durationSeconds: Double
    public var createdAt: Date
    /// Last time a segment was attributed to the speaker or the profile changed; drives inactivity removal.
    public var updatedAt: Date
    /// Profile updates, counting the creation as the first (FluidAudio's convention).
    public var updateCount: Int
    /// The most recent segment embeddings that refined the profile, oldest first, at most the configured limit.
    public var rawEmbeddings: [RawEmbedding]
    /// Permanent speakers survive merges, removals and resets unless the caller overrides that explicitly.
    public var isPermanent: Bool
    /// Segments attributed to the speaker by `assignSpeaker` (created or assigned).
    public var segmentCount: Int
    /// Sum of the confidences passed with those segments; see `averageConfidence`.
    public var confidenceSum: Double

    public init(
        id: String,
        name: String? = nil,
        currentEmbedding: [Float],
        durationSeconds: Double = 0,
        createdAt: Date,
        updatedAt: Date? = nil,
        updateCount: Int = 1,
        rawEmbeddings: [RawEmbedding] = [],
        isPermanent: Bool = false,
        segmentCount: Int = 0,
        confidenceSum: Double = 0
    ) {
        self.id = id
        self.name = name ?? id
        self.currentEmbedding = currentEmbedding
        self.durationSeconds = durationSeconds
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.updateCount = updateCount
        self.rawEmbeddings = rawEmbeddings
        self.isPermanent = isPermanent
        self.segmentCount = segmentCount
        self.confidenceSum = confidenceSum
    }

    /// Mean confidence of the segments attributed by `assignSpeaker`; nil before the first one.
    public var averageConfidence: Double? {
        segmentCount > 0 ? confidenceSum / Double(segmentCount) : nil
    }
}
