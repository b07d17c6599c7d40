/// Checks on everything that enters the database from outside (known speakers, upserts, snapshots,
/// assignment arguments), so the database itself never holds a vector it cannot compare.
extension SpeakerManagerConfig {
    func unitEmbedding(_ embedding: [Float]) throws(SpeakerManagerError) -> [Float] {
        try SpeakerUtilities.normalizedEmbedding(embedding, dimension: embeddingDimension)
    }

    func checkDuration(_ seconds: Double, _ what: String) throws(SpeakerManagerError) {
        guard seconds.isFinite, seconds >= 0 else {
            throw SpeakerManagerError(.invalidDuration, "\(what) must be finite and >= 0 seconds, got \(seconds)")
        }
    }

    func checkConfidence(_ confidence: Float) throws(SpeakerManagerError) {
        guard confidence.isFinite, (0...1).contains(confidence) else {
            throw SpeakerManagerError(.invalidConfidence, "confidence must be in 0...1, got \(confidence)")
        }
    }

    func threshold(_ override: Float?, default value: Float) throws(SpeakerManagerError) -> Float {
        guard let override else { return value }
        guard override.isFinite, (0...2).contains(override) else {
            throw SpeakerManagerError(.invalidThreshold, "threshold must be a cosine distance in 0...2, got \(override)")
        }
        return override
    }

    /// The speaker as the database stores it: unit profile, history checked, sorted and capped.
    func validatedSpeaker(_ speaker: Speaker) throws(SpeakerManagerError) -> Speaker {
        guard !speaker.id.isEmpty else {
            throw SpeakerManagerError(.invalidSpeakerID, "speaker id must not be empty")
        }
        var stored = speaker
        do throws(SpeakerManagerError) {
            stored.currentEmbedding = try unitEmbedding(speaker.currentEmbedding)
        } catch {
            throw SpeakerManagerError(error.code, "speaker \(speaker.id): \(error.message)")
        }
        try checkDuration(speaker.durationSeconds, "speaker \(speaker.id) durationSeconds")
        guard speaker.updateCount >= 0, speaker.segmentCount >= 0 else {
            throw SpeakerManagerError(
                .invalidSpeakerRecord,
                "speaker \(speaker.id): updateCount (\(speaker.updateCount)) and segmentCount (\(speaker.segmentCount)) must be >= 0")
        }
        guard speaker.confidenceSum.isFinite, speaker.confidenceSum >= 0,
            speaker.confidenceSum <= Double(speaker.segmentCount)
        else {
            throw SpeakerManagerError(
                .invalidSpeakerRecord,
                "speaker \(speaker.id): confidenceSum must be in 0...segmentCount, got \(speaker.confidenceSum)")
        }
        for raw in speaker.rawEmbeddings {
            try checkRaw(raw, of: speaker.id)
        }
        stored.rawEmbeddings = Speaker.mostRecent(speaker.rawEmbeddings, limit: rawEmbeddingHistoryLimit)
        return stored
    }

    func checkRaw(_ raw: RawEmbedding, of speakerId: String) throws(SpeakerManagerError) {
        let context = "speaker \(speakerId), segment \(raw.segmentId)"
        do throws(SpeakerManagerError) {
            try SpeakerUtilities.validateEmbedding(raw.embedding, dimension: embeddingDimension)
        } catch {
            throw SpeakerManagerError(error.code, "\(context): raw \(error.message)")
        }
        try checkDuration(raw.durationSeconds, "\(context) durationSeconds")
    }
}
