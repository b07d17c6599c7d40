#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

extension SpeakerManager {
    /// Pre-loads known speakers (e.g. enrolled voices) so they are recognised by id and name.
    ///
    /// Every speaker is validated first (non-empty id, embedding of the configured dimension, finite and
    /// non-zero, sane counts) and nothing is applied if any is invalid. Profiles are L2-normalised and
    /// histories capped to the most recent `rawEmbeddingHistoryLimit`. Numeric ids move the numbering of
    /// created speakers past them.
    ///
    /// - Parameters:
    ///   - mode: what to do when an id already exists; see `SpeakerInitializationMode`. Default `.skip`.
    ///   - preserveIfPermanent: an existing permanent speaker is neither overwritten nor merged into, and
    ///     `.reset` keeps permanent speakers. Default true.
    @discardableResult
    public func initializeKnownSpeakers(
        _ speakers: [Speaker], mode: SpeakerInitializationMode = .skip, preserveIfPermanent: Bool = true
    ) throws(SpeakerManagerError) -> SpeakerInitializationSummary {
        var validated: [Speaker] = []
        validated.reserveCapacity(speakers.count)
        for speaker in speakers { validated.append(try config.validatedSpeaker(speaker)) }
        let summary = withDatabase { database, now in
            database.initializeKnownSpeakers(validated, mode: mode, preserveIfPermanent: preserveIfPermanent, now: now)
        }
        logger.info(
            "known speakers initialised",
            metadata: [
                "mode": "\(mode.rawValue)", "inserted": "\(summary.inserted)", "overwritten": "\(summary.overwritten)",
                "merged": "\(summary.merged)", "skipped": "\(summary.skipped)",
                "removed_by_reset": "\(summary.removedByReset)",
            ])
        return summary
    }

    /// Inserts the speaker, or updates the one with its id: profile, duration, history, counts, name and
    /// `updatedAt` are taken from `speaker`; `createdAt` stays the existing one, and a permanent speaker
    /// stays permanent (`isPermanent` can only be raised here; `revokePermanence` lowers it).
    /// Returns the speaker as stored.
    @discardableResult
    public func upsertSpeaker(_ speaker: Speaker) throws(SpeakerManagerError) -> Speaker {
        let validated = try config.validatedSpeaker(speaker)
        let stored = withDatabase { database, _ in
            database.upsert(validated, replacesName: true, replacesSegmentStatistics: true)
        }
        logger.debug("speaker upserted", metadata: ["speaker": "\(stored.id)", "permanent": "\(stored.isPermanent)"])
        return stored
    }

    /// Inserts or updates a speaker from its parts (FluidAudio's parameter form). On update, `createdAt` is
    /// ignored, `updatedAt` defaults to now, the name changes only when `name` is given, the segment
    /// statistics are kept, and permanence can only be raised. On insert, the name defaults to the id and
    /// the timestamps to now.
    @discardableResult
    public func upsertSpeaker(
        id: String,
        currentEmbedding: [Float],
        durationSeconds: Double,
        rawEmbeddings: [RawEmbedding] = [],
        updateCount: Int = 1,
        createdAt: Date? = nil,
        updatedAt: Date? = nil,
        isPermanent: Bool = false,
        name: String? = nil
    ) throws(SpeakerManagerError) -> Speaker {
        // Validated with a placeholder time; the real one is read inside the critical section.
        let placeholder = Date(timeIntervalSince1970: 0)
        let validated = try config.validatedSpeaker(
            Speaker(
                id: id, name: name, currentEmbedding: currentEmbedding, durationSeconds: durationSeconds,
                createdAt: createdAt ?? placeholder, updatedAt: updatedAt ?? placeholder, updateCount: updateCount,
                rawEmbeddings: rawEmbeddings, isPermanent: isPermanent))
        let stored = withDatabase { database, now in
            var incoming = validated
            if createdAt == nil { incoming.createdAt = now }
            if updatedAt == nil { incoming.updatedAt = now }
            return database.upsert(incoming, replacesName: name != nil, replacesSegmentStatistics: false)
        }
        logger.debug("speaker upserted", metadata: ["speaker": "\(stored.id)", "permanent": "\(stored.isPermanent)"])
        return stored
    }
}
