#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SpeakerDatabase {
    /// Assign-or-create (FluidAudio's `assignSpeaker`), on a validated unit embedding.
    mutating func assign(
        unitEmbedding: [Float],
        speechDurationSeconds: Double,
        confidence: Float,
        speakerThreshold: Float,
        newName: String?,
        segmentId: SegmentID?,
        now: Date
    ) -> AssignmentDecision {
        let nearest = nearest(to: unitEmbedding)
        if let nearest, nearest.distance <= speakerThreshold {
            let updates = nearest.distance <= config.embeddingThreshold
                && speechDurationSeconds >= config.minEmbeddingUpdateDurationSeconds
            if updates {
                let segment = issueSegmentID(segmentId)
                speakers[nearest.id]?.applyUpdate(
                    unitEmbedding: unitEmbedding, durationSeconds: speechDurationSeconds, segmentId: segment,
                    alpha: config.embeddingUpdateAlpha, timestamp: now, historyLimit: config.rawEmbeddingHistoryLimit)
            } else {
                speakers[nearest.id]?.durationSeconds += speechDurationSeconds
                speakers[nearest.id]?.updatedAt = now
            }
            speakers[nearest.id]?.segmentCount += 1
            speakers[nearest.id]?.confidenceSum += Double(confidence)
            return .assigned(id: nearest.id, distance: nearest.distance, updated: updates)
        }
        guard speechDurationSeconds >= config.minSpeechDurationSeconds else {
            return .rejected(
                reason: .tooShortForNewSpeaker(
                    speechDurationSeconds: speechDurationSeconds, minimumSeconds: config.minSpeechDurationSeconds,
                    nearest: nearest))
        }
        let id = issueSpeakerID()
        var speaker = Speaker(
            id: id, name: newName ?? "Speaker \(id)", currentEmbedding: unitEmbedding,
            durationSeconds: speechDurationSeconds, createdAt: now, updatedAt: now, updateCount: 1,
            segmentCount: 1, confidenceSum: Double(confidence))
        // The first segment starts the history, as in FluidAudio, so a later merge or reassignment can
        // recompute the profile from all of its segments.
        speaker.rawEmbeddings.reserveCapacity(config.rawEmbeddingHistoryLimit)
        speaker.insertRaw(
            RawEmbedding(
                segmentId: issueSegmentID(segmentId), unitEmbedding: unitEmbedding, timestamp: now,
                durationSeconds: speechDurationSeconds),
            historyLimit: config.rawEmbeddingHistoryLimit)
        speakers[id] = speaker
        return .created(id: id, nearest: nearest)
    }
}
