#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Profile arithmetic (FluidAudio's `Speaker` methods), with the time passed in rather than read from a
/// clock, and the history limit passed in because a value does not know its manager's configuration.
extension Speaker {
    /// Refines the profile with one segment: the segment joins the history, the profile moves toward it by
    /// an exponential moving average (`alpha` is the weight the old profile keeps), and the duration,
    /// `updatedAt` and `updateCount` advance. O(dimension): the history is not re-averaged.
    public mutating func updateMainEmbedding(
        durationSeconds: Double,
        embedding: [Float],
        segmentId: SegmentID,
        alpha: Float = SpeakerManagerConfig.default.embeddingUpdateAlpha,
        timestamp: Date,
        historyLimit: Int = SpeakerManagerConfig.default.rawEmbeddingHistoryLimit
    ) throws(SpeakerManagerError) {
        let unit = try SpeakerUtilities.normalizedEmbedding(embedding, dimension: currentEmbedding.count)
        applyUpdate(
            unitEmbedding: unit, durationSeconds: durationSeconds, segmentId: segmentId, alpha: alpha,
            timestamp: timestamp, historyLimit: historyLimit)
    }

    /// Adds a segment to the history in timestamp order and drops the oldest beyond `historyLimit`.
    /// The profile is left alone; `recalculateMainEmbedding` recomputes it from the history.
    public mutating func addRawEmbedding(
        _ raw: RawEmbedding, historyLimit: Int = SpeakerManagerConfig.default.rawEmbeddingHistoryLimit
    ) throws(SpeakerManagerError) {
        guard raw.dimension == currentEmbedding.count else {
            throw SpeakerManagerError(
                .dimensionMismatch,
                "raw embedding of segment \(raw.segmentId) has \(raw.dimension) values, speaker \(id) has \(currentEmbedding.count)")
        }
        insertRaw(raw, historyLimit: historyLimit)
    }

    /// Removes the segment from the history and returns it; the profile is left alone.
    @discardableResult
    public mutating func removeRawEmbedding(segmentId: SegmentID) -> RawEmbedding? {
        guard let index = rawEmbeddings.firstIndex(where: { $0.segmentId == segmentId }) else { return nil }
        return rawEmbeddings.remove(at: index)
    }

    /// Replaces the profile by the mean direction of the history; no change with an empty history (or one
    /// whose embeddings cancel out).
    public mutating func recalculateMainEmbedding() {
        guard !rawEmbeddings.isEmpty,
            let mean = SpeakerUtilities.averageEmbeddings(rawEmbeddings.map(\.embedding)),
            mean.count == currentEmbedding.count
        else { return }
        currentEmbedding = mean
    }

    /// Absorbs `other`: histories are combined keeping the `historyLimit` most recent, durations and
    /// counts add up, and the profile is recomputed from the combined history. When neither has a history
    /// (known speakers loaded without one) the profile becomes the duration-weighted mean of the two.
    /// The name becomes `keepName` when given; `isPermanent` and `createdAt` stay this speaker's.
    public mutating func mergeWith(
        _ other: Speaker,
        keepName: String? = nil,
        historyLimit: Int = SpeakerManagerConfig.default.rawEmbeddingHistoryLimit,
        now: Date
    ) throws(SpeakerManagerError) {
        guard other.currentEmbedding.count == currentEmbedding.count else {
            throw SpeakerManagerError(
                .dimensionMismatch,
                "speaker \(other.id) has \(other.currentEmbedding.count) dimensions, speaker \(id) has \(currentEmbedding.count)")
        }
        absorb(other, keepName: keepName, historyLimit: historyLimit, now: now)
    }

    // MARK: - Internals (inputs already validated and normalised)

    mutating func absorb(_ other: Speaker, keepName: String?, historyLimit: Int, now: Date) {
        let combined = rawEmbeddings + other.rawEmbeddings
        rawEmbeddings = Self.mostRecent(combined, limit: historyLimit)
        if rawEmbeddings.isEmpty {
            let total = durationSeconds + other.durationSeconds
            let ownWeight = total > 0 ? durationSeconds / total : 0.5
            let mixed = zip(currentEmbedding, other.currentEmbedding).map {
                ownWeight * Double($0) + (1 - ownWeight) * Double($1)
            }
            if let unit = SpeakerUtilities.unitVector(mixed) { currentEmbedding = unit }
        } else {
            recalculateMainEmbedding()
        }
        if let keepName { name = keepName }
        durationSeconds += other.durationSeconds
        updateCount += other.updateCount
        segmentCount += other.segmentCount
        confidenceSum += other.confidenceSum
        updatedAt = now
    }

    mutating func applyUpdate(
        unitEmbedding: [Float], durationSeconds: Double, segmentId: SegmentID, alpha: Float, timestamp: Date,
        historyLimit: Int
    ) {
        insertRaw(
            RawEmbedding(
                segmentId: segmentId, unitEmbedding: unitEmbedding, timestamp: timestamp,
                durationSeconds: durationSeconds),
            historyLimit: historyLimit)
        if let mixed = SpeakerUtilities.updateEmbedding(current: currentEmbedding, new: unitEmbedding, alpha: alpha) {
            currentEmbedding = mixed
        }
        self.durationSeconds += durationSeconds
        updatedAt = timestamp
        updateCount += 1
    }

    /// Keeps the history sorted by timestamp (equal timestamps in arrival order) and at most `historyLimit` long.
    mutating func insertRaw(_ raw: RawEmbedding, historyLimit: Int) {
        guard historyLimit > 0 else {
            rawEmbeddings.removeAll()
            return
        }
        if rawEmbeddings.count >= historyLimit {
            // Older than everything kept: it would be the entry dropped.
            if let oldest = rawEmbeddings.first, raw.timestamp < oldest.timestamp { return }
            // Trimming before inserting keeps the buffer at the limit instead of growing it past.
            rawEmbeddings.removeFirst(rawEmbeddings.count - historyLimit + 1)
        }
        let index = rawEmbeddings.lastIndex(where: { $0.timestamp <= raw.timestamp }).map { $0 + 1 } ?? 0
        rawEmbeddings.insert(raw, at: index)
    }

    /// The `limit` most recent entries, oldest first; equal timestamps keep their given order.
    static func mostRecent(_ entries: [RawEmbedding], limit: Int) -> [RawEmbedding] {
        guard limit > 0 else { return [] }
        let ordered = entries.enumerated()
            .sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
            .map(\.element)
        return Array(ordered.suffix(limit))
    }
}
