#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a merge, removal or edit did nothing; the manager logs it and answers `false`.
enum EditOutcome: Equatable {
    case done
    case notFound(String)
    case sameSpeaker
    case permanent(String)
}

extension SpeakerDatabase {
    mutating func initializeKnownSpeakers(
        _ known: [Speaker], mode: SpeakerInitializationMode, preserveIfPermanent: Bool, now: Date
    ) -> SpeakerInitializationSummary {
        var summary = SpeakerInitializationSummary()
        if mode == .reset {
            summary.removedByReset = reset(keepIfPermanent: preserveIfPermanent)
        }
        for speaker in known {
            if let existing = speakers[speaker.id] {
                let isProtected = existing.isPermanent && preserveIfPermanent
                switch mode {
                case .skip:
                    summary.skipped.append(speaker.id)
                    continue
                case _ where isProtected:
                    summary.skipped.append(speaker.id)
                    continue
                case .reset, .overwrite:
                    speakers[speaker.id] = speaker
                    summary.overwritten.append(speaker.id)
                case .merge:
                    speakers[speaker.id]?.absorb(
                        speaker, keepName: speaker.name, historyLimit: config.rawEmbeddingHistoryLimit, now: now)
                    summary.merged.append(speaker.id)
                }
            } else {
                speakers[speaker.id] = speaker
                summary.inserted.append(speaker.id)
            }
            noteSpeakerID(speaker.id)
            for raw in speaker.rawEmbeddings { noteSegmentID(raw.segmentId) }
        }
        return summary
    }

    /// FluidAudio's upsert: an existing speaker takes the incoming profile, duration, history, update count
    /// and `updatedAt`, keeps its `createdAt`, and stays permanent once permanent. The name and segment
    /// statistics are replaced only when the caller supplied them.
    mutating func upsert(_ incoming: Speaker, replacesName: Bool, replacesSegmentStatistics: Bool) -> Speaker {
        var stored = incoming
        if let existing = speakers[incoming.id] {
            stored = existing
            stored.currentEmbedding = incoming.currentEmbedding
            stored.durationSeconds = incoming.durationSeconds
            stored.rawEmbeddings = incoming.rawEmbeddings
            stored.updateCount = incoming.updateCount
            stored.updatedAt = incoming.updatedAt
            stored.isPermanent = existing.isPermanent || incoming.isPermanent
            if replacesName { stored.name = incoming.name }
            if replacesSegmentStatistics {
                stored.segmentCount = incoming.segmentCount
                stored.confidenceSum = incoming.confidenceSum
            }
        }
        speakers[incoming.id] = stored
        noteSpeakerID(incoming.id)
        for raw in incoming.rawEmbeddings { noteSegmentID(raw.segmentId) }
        return stored
    }

    mutating func merge(
        _ sourceId: String, into destinationId: String, mergedName: String?, stopIfPermanent: Bool, now: Date
    ) -> EditOutcome {
        guard sourceId != destinationId else { return .sameSpeaker }
        guard let source = speakers[sourceId] else { return .notFound(sourceId) }
        guard speakers[destinationId] != nil else { return .notFound(destinationId) }
        if stopIfPermanent && source.isPermanent { return .permanent(sourceId) }
        speakers[destinationId]?.absorb(
            source, keepName: mergedName, historyLimit: config.rawEmbeddingHistoryLimit, now: now)
        speakers[sourceId] = nil
        return .done
    }

    mutating func remove(_ id: String, keepIfPermanent: Bool) -> EditOutcome {
        guard let speaker = speakers[id] else { return .notFound(id) }
        if keepIfPermanent && speaker.isPermanent { return .permanent(id) }
        speakers[id] = nil
        return .done
    }

    /// Removes the speakers `predicate` selects (sparing permanent ones when `keepIfPermanent`); returns
    /// their ids in `SpeakerIDOrder`.
    mutating func removeAll(keepIfPermanent: Bool, where predicate: (Speaker) -> Bool) -> [String] {
        let doomed = sortedSpeakers.filter { !(keepIfPermanent && $0.isPermanent) && predicate($0) }.map(\.id)
        for id in doomed { speakers[id] = nil }
        return doomed
    }

    /// Empties the database (or keeps the permanent speakers) and restarts speaker numbering above the
    /// numeric ids that remain. Segment numbering continues, so segment ids stay unique.
    mutating func reset(keepIfPermanent: Bool) -> [String] {
        let removed = removeAll(keepIfPermanent: keepIfPermanent) { _ in true }
        recomputeNextSpeakerNumber()
        return removed
    }

    mutating func setPermanent(_ id: String, _ isPermanent: Bool) -> EditOutcome {
        guard speakers[id] != nil else { return .notFound(id) }
        speakers[id]?.isPermanent = isPermanent
        return .done
    }

    mutating func rename(_ id: String, to name: String) -> EditOutcome {
        guard speakers[id] != nil else { return .notFound(id) }
        speakers[id]?.name = name
        return .done
    }

    /// Moves one segment's raw embedding (and its speech duration) between speakers and recomputes both
    /// profiles from their histories. A source left without history keeps its profile.
    mutating func reassignSegment(_ segmentId: SegmentID, from sourceId: String, to destinationId: String, now: Date)
        -> EditOutcome
    {
        guard sourceId != destinationId else { return .sameSpeaker }
        guard var source = speakers[sourceId] else { return .notFound(sourceId) }
        guard var destination = speakers[destinationId] else { return .notFound(destinationId) }
        guard let raw = source.removeRawEmbedding(segmentId: segmentId) else {
            return .notFound(segmentId.description)
        }
        source.durationSeconds = max(0, source.durationSeconds - raw.durationSeconds)
        source.recalculateMainEmbedding()
        source.updatedAt = now
        destination.insertRaw(raw, historyLimit: config.rawEmbeddingHistoryLimit)
        destination.durationSeconds += raw.durationSeconds
        destination.recalculateMainEmbedding()
        destination.updatedAt = now
        speakers[sourceId] = source
        speakers[destinationId] = destination
        return .done
    }

    /// Pairs within `threshold` of each other, in `SpeakerIDOrder` of (first, second). The second speaker
    /// merges into the first unless it is permanent, in which case the first merges into it.
    func mergeablePairs(within threshold: Float, excludeIfBothPermanent: Bool) -> [MergeablePair] {
        let ordered = sortedSpeakers
        var pairs: [MergeablePair] = []
        for (offset, first) in ordered.enumerated() {
            for second in ordered[(offset + 1)...] {
                if excludeIfBothPermanent && first.isPermanent && second.isPermanent { continue }
                let distance = SpeakerUtilities.cosineDistance(first.currentEmbedding, second.currentEmbedding)
                guard distance <= threshold else { continue }
                pairs.append(
                    second.isPermanent
                        ? MergeablePair(speakerToMerge: first.id, destination: second.id, distance: distance)
                        : MergeablePair(speakerToMerge: second.id, destination: first.id, distance: distance))
            }
        }
        return pairs
    }
}
