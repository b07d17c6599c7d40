import Logging

extension SpeakerManager {
    /// The whole database as a Codable value (speakers sorted by id), to persist across reconnects.
    public func snapshot() -> SpeakerManagerSnapshot {
        withDatabase { database, _ in
            SpeakerManagerSnapshot(
                embeddingDimension: database.config.embeddingDimension, speakers: database.sortedSpeakers,
                nextSpeakerNumber: database.nextSpeakerNumber, nextSegmentNumber: database.nextSegmentNumber)
        }
    }

    /// Replaces the whole database by a snapshot, atomically. The snapshot is validated like any input
    /// (format version, dimension, every speaker, unique ids); on error nothing changes. Histories longer
    /// than this manager's limit keep their most recent entries, and the counters are raised above every
    /// id present so restored sessions never reuse an id.
    public func restore(_ snapshot: SpeakerManagerSnapshot) throws(SpeakerManagerError) {
        guard snapshot.formatVersion == SpeakerManagerSnapshot.currentFormatVersion else {
            throw SpeakerManagerError(
                .invalidSnapshot,
                "snapshot format version \(snapshot.formatVersion) is not \(SpeakerManagerSnapshot.currentFormatVersion)")
        }
        guard snapshot.embeddingDimension == config.embeddingDimension else {
            throw SpeakerManagerError(
                .invalidSnapshot,
                "snapshot embeddings have \(snapshot.embeddingDimension) dimensions, this manager \(config.embeddingDimension)")
        }
        guard snapshot.nextSpeakerNumber >= 1, snapshot.nextSegmentNumber >= 1 else {
            throw SpeakerManagerError(.invalidSnapshot, "snapshot counters must be >= 1")
        }
        var rebuilt = SpeakerDatabase(config: config)
        for speaker in snapshot.speakers {
            let validated = try config.validatedSpeaker(speaker)
            guard rebuilt.speakers[validated.id] == nil else {
                throw SpeakerManagerError(.invalidSnapshot, "snapshot holds speaker \(validated.id) twice")
            }
            rebuilt.speakers[validated.id] = validated
            rebuilt.noteSpeakerID(validated.id)
            for raw in validated.rawEmbeddings { rebuilt.noteSegmentID(raw.segmentId) }
        }
        rebuilt.nextSpeakerNumber = max(rebuilt.nextSpeakerNumber, snapshot.nextSpeakerNumber)
        rebuilt.nextSegmentNumber = max(rebuilt.nextSegmentNumber, snapshot.nextSegmentNumber)
        withDatabase { database, _ in database = rebuilt }
        logger.info("speakers restored", metadata: ["speakers": "\(snapshot.speakers.count)"])
    }
}
