#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

extension SpeakerManager {
    /// Folds `sourceId` into `destinationId` (histories combined, durations and counts summed, profile
    /// recomputed) and removes the source. `destinationId` keeps its id, permanence and, unless
    /// `mergedName` is given, its name.
    /// - Parameter stopIfPermanent: refuse when the source is permanent. Default true.
    /// - Returns: false when either speaker is missing, they are the same, or the source is protected.
    @discardableResult
    public func mergeSpeaker(
        _ sourceId: String, into destinationId: String, mergedName: String? = nil, stopIfPermanent: Bool = true
    ) -> Bool {
        let outcome = withDatabase { database, now in
            database.merge(
                sourceId, into: destinationId, mergedName: mergedName, stopIfPermanent: stopIfPermanent, now: now)
        }
        return report(outcome, "merge speaker", ["source": "\(sourceId)", "destination": "\(destinationId)"])
    }

    /// - Parameter keepIfPermanent: refuse when the speaker is permanent. Default true.
    /// - Returns: false when the speaker is missing or protected.
    @discardableResult
    public func removeSpeaker(_ id: String, keepIfPermanent: Bool = true) -> Bool {
        let outcome = withDatabase { database, _ in database.remove(id, keepIfPermanent: keepIfPermanent) }
        return report(outcome, "remove speaker", ["speaker": "\(id)"])
    }

    /// Removes speakers whose `updatedAt` is before `date`. Returns the removed ids, sorted.
    @discardableResult
    public func removeSpeakersInactive(since date: Date, keepIfPermanent: Bool = true) -> [String] {
        let removed = withDatabase { database, _ in
            database.removeAll(keepIfPermanent: keepIfPermanent) { $0.updatedAt < date }
        }
        logRemoval(removed, "inactive")
        return removed
    }

    /// Removes speakers not updated within `inactivity` before now (the manager's clock).
    /// Returns the removed ids, sorted.
    @discardableResult
    public func removeSpeakersInactive(for inactivity: Duration, keepIfPermanent: Bool = true) -> [String] {
        let (seconds, attoseconds) = inactivity.components
        let inactivitySeconds = Double(seconds) + Double(attoseconds) * 1e-18
        let removed = withDatabase { database, now in
            let cutoff = now.addingTimeInterval(-inactivitySeconds)
            return database.removeAll(keepIfPermanent: keepIfPermanent) { $0.updatedAt < cutoff }
        }
        logRemoval(removed, "inactive")
        return removed
    }

    /// Removes the speakers `predicate` selects; permanent ones only when `keepIfPermanent` is false.
    /// Returns the removed ids, sorted.
    @discardableResult
    public func removeSpeakers(where predicate: (Speaker) -> Bool, keepIfPermanent: Bool = true) -> [String] {
        let removed = withDatabase { database, _ in
            database.removeAll(keepIfPermanent: keepIfPermanent, where: predicate)
        }
        logRemoval(removed, "predicate")
        return removed
    }

    /// Clears the database; with `keepIfPermanent`, permanent speakers stay. Created-speaker numbering
    /// restarts above the numeric ids that remain ("1" after a full reset). Returns the removed ids.
    @discardableResult
    public func reset(keepIfPermanent: Bool = false) -> [String] {
        let removed = withDatabase { database, _ in database.reset(keepIfPermanent: keepIfPermanent) }
        logRemoval(removed, "reset")
        return removed
    }

    /// Protects the speaker from merges, removals, resets and overwrites that do not explicitly override it.
    @discardableResult
    public func makeSpeakerPermanent(_ id: String) -> Bool {
        let outcome = withDatabase { database, _ in database.setPermanent(id, true) }
        return report(outcome, "make speaker permanent", ["speaker": "\(id)"])
    }

    @discardableResult
    public func revokePermanence(from id: String) -> Bool {
        let outcome = withDatabase { database, _ in database.setPermanent(id, false) }
        return report(outcome, "revoke permanence", ["speaker": "\(id)"])
    }

    /// Makes every speaker non-permanent.
    public func resetPermanentFlags() {
        withDatabase { database, _ in
            for id in database.speakers.keys { database.speakers[id]?.isPermanent = false }
        }
    }

    /// Sets the display name, e.g. after "My name is Alice" (FluidAudio mutates its `Speaker` class for
    /// this; here speakers are values, so the manager does it). The id does not change.
    @discardableResult
    public func renameSpeaker(_ id: String, to name: String) -> Bool {
        let outcome = withDatabase { database, _ in database.rename(id, to: name) }
        return report(outcome, "rename speaker", ["speaker": "\(id)"])
    }

    /// Moves a misattributed segment's raw embedding and speech duration from one speaker to another and
    /// recomputes both profiles from their histories. Only segments that refined a profile (and are still
    /// in its history) can be moved.
    @discardableResult
    public func reassignSegment(segmentId: SegmentID, from sourceId: String, to destinationId: String) -> Bool {
        let outcome = withDatabase { database, now in
            database.reassignSegment(segmentId, from: sourceId, to: destinationId, now: now)
        }
        return report(
            outcome, "reassign segment",
            ["segment": "\(segmentId)", "source": "\(sourceId)", "destination": "\(destinationId)"])
    }

    private func report(_ outcome: EditOutcome, _ action: String, _ metadata: Logger.Metadata) -> Bool {
        switch outcome {
        case .done:
            logger.debug("\(action)", metadata: metadata)
            return true
        case .notFound(let what):
            logger.debug("\(action) refused: \(what) not found", metadata: metadata)
        case .sameSpeaker:
            logger.debug("\(action) refused: source and destination are the same speaker", metadata: metadata)
        case .permanent(let id):
            logger.debug("\(action) refused: speaker \(id) is permanent", metadata: metadata)
        }
        return false
    }

    private func logRemoval(_ removed: [String], _ reason: String) {
        guard !removed.isEmpty else { return }
        logger.info("speakers removed", metadata: ["reason": "\(reason)", "speakers": "\(removed)"])
    }
}
