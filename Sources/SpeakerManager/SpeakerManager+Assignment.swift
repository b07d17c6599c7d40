import Logging

extension SpeakerManager {
    /// Assigns a segment embedding to the nearest speaker or creates one, and says what it did:
    ///
    /// - nearest speaker within `speakerThreshold` → `.assigned`; its duration grows, and if the distance is
    ///   also within `embeddingThreshold` and the segment lasts at least `minEmbeddingUpdateDurationSeconds`,
    ///   the segment joins its history and moves its profile (EMA with `embeddingUpdateAlpha`);
    /// - otherwise, with at least `minSpeechDurationSeconds` of speech → `.created` ("1", "2", …);
    /// - otherwise → `.rejected`, nothing changes.
    ///
    /// - Parameters:
    ///   - embedding: any scale; it is L2-normalised. Throws if it has the wrong length, NaN/infinity or is all zeros.
    ///   - confidence: the caller's confidence in the embedding, 0...1; feeds `statistics.averageConfidence`.
    ///   - speakerThreshold: overrides `config.speakerThreshold` for this call.
    ///   - newName: name of a speaker created by this call (default "Speaker N").
    ///   - segmentId: labels the history entry this segment may create (default: the next number).
    public func assign(
        _ embedding: [Float],
        speechDurationSeconds: Double,
        confidence: Float = 1,
        speakerThreshold: Float? = nil,
        newName: String? = nil,
        segmentId: SegmentID? = nil
    ) throws(SpeakerManagerError) -> AssignmentDecision {
        try assignReturningSpeaker(
            embedding, speechDurationSeconds: speechDurationSeconds, confidence: confidence,
            speakerThreshold: speakerThreshold, newName: newName, segmentId: segmentId
        ).decision
    }

    /// `assign`, answering with the speaker as it is after the call (FluidAudio's `assignSpeaker`);
    /// nil when the segment was too short to create a speaker.
    public func assignSpeaker(
        _ embedding: [Float],
        speechDurationSeconds: Double,
        confidence: Float = 1,
        speakerThreshold: Float? = nil,
        newName: String? = nil,
        segmentId: SegmentID? = nil
    ) throws(SpeakerManagerError) -> Speaker? {
        try assignReturningSpeaker(
            embedding, speechDurationSeconds: speechDurationSeconds, confidence: confidence,
            speakerThreshold: speakerThreshold, newName: newName, segmentId: segmentId
        ).speaker
    }

    private func assignReturningSpeaker(
        _ embedding: [Float],
        speechDurationSeconds: Double,
        confidence: Float,
        speakerThreshold: Float?,
        newName: String?,
        segmentId: SegmentID?
    ) throws(SpeakerManagerError) -> (decision: AssignmentDecision, speaker: Speaker?) {
        let unit = try config.unitEmbedding(embedding)
        try config.checkDuration(speechDurationSeconds, "speechDurationSeconds")
        try config.checkConfidence(confidence)
        let threshold = try config.threshold(speakerThreshold, default: config.speakerThreshold)
        let result = withDatabase { database, now in
            let decision = database.assign(
                unitEmbedding: unit, speechDurationSeconds: speechDurationSeconds, confidence: confidence,
                speakerThreshold: threshold, newName: newName, segmentId: segmentId, now: now)
            return (decision: decision, speaker: decision.speakerId.flatMap { database.speakers[$0] })
        }
        log(result.decision, speechDurationSeconds: speechDurationSeconds)
        return result
    }

    private func log(_ decision: AssignmentDecision, speechDurationSeconds: Double) {
        switch decision {
        case .assigned(let id, let distance, let updated):
            logger.trace(
                "segment assigned",
                metadata: [
                    "speaker": "\(id)", "distance": "\(distance)", "profile_updated": "\(updated)",
                    "speech_seconds": "\(speechDurationSeconds)",
                ])
        case .created(let id, let nearest):
            logger.debug(
                "speaker created",
                metadata: [
                    "speaker": "\(id)", "nearest": "\(nearest.map { "\($0.id)@\($0.distance)" } ?? "none")",
                    "speech_seconds": "\(speechDurationSeconds)",
                ])
        case .rejected(.tooShortForNewSpeaker(let seconds, let minimum, let nearest)):
            logger.trace(
                "segment too short for a new speaker",
                metadata: [
                    "speech_seconds": "\(seconds)", "minimum_seconds": "\(minimum)",
                    "nearest": "\(nearest.map { "\($0.id)@\($0.distance)" } ?? "none")",
                ])
        }
    }
}
