/// Aggregates over every tracked speaker (FluidAudio's `getGlobalSpeakerStats`, extended).
public struct SpeakerStatistics: Hashable, Sendable, Codable {
    public var totalSpeakers: Int
    public var permanentSpeakers: Int
    /// Speakers with at least one raw embedding in their history.
    public var speakersWithHistory: Int
    /// Raw embeddings held across all speakers.
    public var totalRawEmbeddings: Int
    public var totalDurationSeconds: Double
    /// `totalDurationSeconds / totalSpeakers`; 0 with no speakers.
    public var averageDurationSeconds: Double
    /// Mean of the confidences passed to `assignSpeaker` for every segment still attributed to a tracked
    /// speaker; 0 when there is none. (FluidAudio reports `min(1, mean updateCount / 10)` under this name.)
    public var averageConfidence: Double
    /// Sum of `Speaker.storedEmbeddingBytes`.
    public var storedEmbeddingBytes: Int

    public init(
        totalSpeakers: Int, permanentSpeakers: Int, speakersWithHistory: Int, totalRawEmbeddings: Int,
        totalDurationSeconds: Double, averageDurationSeconds: Double, averageConfidence: Double,
        storedEmbeddingBytes: Int
    ) {
        self.totalSpeakers = totalSpeakers
        self.permanentSpeakers = permanentSpeakers
        self.speakersWithHistory = speakersWithHistory
        self.totalRawEmbeddings = totalRawEmbeddings
        self.totalDurationSeconds = totalDurationSeconds
        self.averageDurationSeconds = averageDurationSeconds
        self.averageConfidence = averageConfidence
        self.storedEmbeddingBytes = storedEmbeddingBytes
    }

    init(_ speakers: some Collection<Speaker>) {
        let totalDuration = speakers.reduce(0) { $0 + $1.durationSeconds }
        let segments = speakers.reduce(0) { $0 + $1.segmentCount }
        let confidence = speakers.reduce(0) { $0 + $1.confidenceSum }
        self.init(
            totalSpeakers: speakers.count,
            permanentSpeakers: speakers.count(where: \.isPermanent),
            speakersWithHistory: speakers.count(where: { !$0.rawEmbeddings.isEmpty }),
            totalRawEmbeddings: speakers.reduce(0) { $0 + $1.rawEmbeddings.count },
            totalDurationSeconds: totalDuration,
            averageDurationSeconds: speakers.isEmpty ? 0 : totalDuration / Double(speakers.count),
            averageConfidence: segments > 0 ? confidence / Double(segments) : 0,
            storedEmbeddingBytes: speakers.reduce(0) { $0 + $1.storedEmbeddingBytes })
    }
}
