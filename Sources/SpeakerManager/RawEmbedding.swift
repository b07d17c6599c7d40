#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One segment's embedding in a speaker's history, kept so the profile can be recomputed after a merge or
/// a reassignment. Stored as half-precision bits: 50 of them in `Float` would be 51.2 KB per speaker, over
/// the product's 50 KB budget; as binary16 they are 25.6 KB.
public struct RawEmbedding: Hashable, Sendable, Codable {
    public var segmentId: SegmentID
    /// When the segment was added (the manager's clock).
    public var timestamp: Date
    /// Speech in the segment; moves with the segment when it is reassigned.
    public var durationSeconds: Double
    /// IEEE 754 binary16 bit patterns of the unit-length embedding.
    public var halfPrecisionBits: [UInt16]

    /// Normalises `embedding` and stores it at half precision; throws if it is non-finite or all zeros.
    public init(segmentId: SegmentID, embedding: [Float], timestamp: Date, durationSeconds: Double = 0)
        throws(SpeakerManagerError)
    {
        let unit = try SpeakerUtilities.normalizedEmbedding(embedding, dimension: embedding.count)
        self.init(segmentId: segmentId, unitEmbedding: unit, timestamp: timestamp, durationSeconds: durationSeconds)
    }

    init(segmentId: SegmentID, unitEmbedding: [Float], timestamp: Date, durationSeconds: Double) {
        self.segmentId = segmentId
        self.timestamp = timestamp
        self.durationSeconds = durationSeconds
        self.halfPrecisionBits = HalfPrecision.encode(unitEmbedding)
    }

    /// The stored embedding widened back to `Float` (unit length within half-precision rounding).
    public var embedding: [Float] { HalfPrecision.decode(halfPrecisionBits) }

    public var dimension: Int { halfPrecisionBits.count }
}
