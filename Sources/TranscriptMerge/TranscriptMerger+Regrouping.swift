/// Utterance grouping of the affected regions and stable id assignment.
///
/// Invariant between updates: each utterance id occupies exactly one contiguous run of `store`, and the runs
/// follow the grouping rule. An update only regroups regions around dirty words and removal points; a region
/// starts at the first word of the utterance before its first change and ends at the first new boundary,
/// after its last change, between two unchanged words where the right one opens an untouched utterance
/// (one with no word changed, moved or removed).
/// From such a boundary on, the old grouping is still right, so nothing beyond it needs looking at.
extension TranscriptMerger {
    /// The new groups (index ranges into `store`) of all affected regions, in time order.
    /// `dirty` and `removalPoints` are ascending; a removal point p means "something vanished before p".
    func regroupedRanges(dirty: [Int], removalPoints: [Int], touched: Set<UtteranceID>) -> [Range<Int>] {
        let count = store.count
        guard count > 0 else { return [] }
        let gap = config.effectiveGapSeconds
        // The rule stays one a left-to-right pass decides from a group's start alone (speaker, gap,
        // size), so a region can still end at an old boundary: from there old and new agree.
        let maxWords = max(1, config.maxUtteranceWords)
        var groups: [Range<Int>] = []
        var nextDirty = 0
        var nextRemoval = 0
        while nextDirty < dirty.count || nextRemoval < removalPoints.count {
            let position = min(
                nextDirty < dirty.count ? dirty[nextDirty] : .max,
                nextRemoval < removalPoints.count ? removalPoints[nextRemoval] : .max
            )
            var start = position > 0 ? min(position, count) - 1 : 0
            while start > 0 && store[start - 1].utteranceID == store[start].utteranceID { start -= 1 }

            var groupStart = start
            var groupSpeaker = store[start].speaker
            var groupEnd = store[start].endSeconds
            var index = start + 1
            while true {
                while nextDirty < dirty.count && dirty[nextDirty] < index { nextDirty += 1 }
                while nextRemoval < removalPoints.count && removalPoints[nextRemoval] < index { nextRemoval += 1 }
                if index >= count {
                    groups.append(groupStart..<count)
                    nextDirty = dirty.count
                    nextRemoval = removalPoints.count
                    break
                }
                let word = store[index]
                if word.speaker != groupSpeaker || word.startSeconds - groupEnd >= gap || index - groupStart >= maxWords {
                    groups.append(groupStart..<index)
                    // In step again only between two unchanged words, the right one opening an untouched
                    // utterance: a new word inserted inside an old utterance would otherwise let its two
                    // halves end up in and out of the region under the same id.
                    let isDirty = nextDirty < dirty.count && dirty[nextDirty] == index
                    let previousIsDirty = nextDirty > 0 && dirty[nextDirty - 1] == index - 1
                    if !isDirty && !previousIsDirty && word.utteranceID != Self.ungrouped
                        && !touched.contains(word.utteranceID) && store[index - 1].utteranceID != word.utteranceID {
                        while nextRemoval < removalPoints.count && removalPoints[nextRemoval] <= index {
                            nextRemoval += 1
                        }
                        break
                    }
                    groupStart = index
                    groupSpeaker = word.speaker
                    groupEnd = word.endSeconds
                } else if word.endSeconds > groupEnd {
                    groupEnd = word.endSeconds
                }
                index += 1
            }
        }
        return groups
    }

    /// Gives each group an id (inherited or fresh), writes it into the words and builds the delta.
    /// `vanishedFrom` counts, per old utterance, its words deleted by this update.
    mutating func assignIDs(
        groups: [Range<Int>], update: PendingUpdate, touched: Set<UtteranceID>, vanishedFrom: [UtteranceID: Int]
    ) -> TranscriptDelta {
        // Old ids per group, as (id, shared words), from the words' pre-update utterance ids.
        var shares: [[(id: UtteranceID, words: Int)]] = []
        shares.reserveCapacity(groups.count)
        var regionCount: [UtteranceID: Int] = [:]
        var candidates: [(group: Int, id: UtteranceID, words: Int)] = []
        for (group, range) in groups.enumerated() {
            var runs: [(id: UtteranceID, words: Int)] = []
            for index in range {
                let id = store[index].utteranceID
                if id == Self.ungrouped { continue }
                if let last = runs.last, last.id == id {
                    runs[runs.count - 1].words += 1
                } else {
                    runs.append((id, 1))
                }
            }
            if runs.count > 1 {
                runs.sort { $0.id < $1.id }
                var merged: [(id: UtteranceID, words: Int)] = []
                for run in runs {
                    if let last = merged.last, last.id == run.id {
                        merged[merged.count - 1].words += run.words
                    } else {
                        merged.append(run)
                    }
                }
                runs = merged
            }
            for run in runs {
                regionCount[run.id, default: 0] += run.words
                candidates.append((group, run.id, run.words))
            }
            shares.append(runs)
        }

        // Greedy: most shared words first; ties to the earlier group, then the smaller old id.
        candidates.sort {
            $0.words != $1.words ? $0.words > $1.words : $0.group != $1.group ? $0.group < $1.group : $0.id < $1.id
        }
        var inherited = [UtteranceID?](repeating: nil, count: groups.count)
        var used = Set<UtteranceID>()
        for candidate in candidates where inherited[candidate.group] == nil && !used.contains(candidate.id) {
            inherited[candidate.group] = candidate.id
            used.insert(candidate.id)
        }

        var delta = TranscriptDelta()
        for (group, range) in groups.enumerated() {
            // Same membership as the old utterance it inherits: every word came from it and none of its
            // words is elsewhere or gone.
            let sameMembers = inherited[group].map { id in
                shares[group].count == 1 && shares[group][0].words == range.count
                    && regionCount[id] == range.count && vanishedFrom[id, default: 0] == 0
            } ?? false
            if sameMembers, let id = inherited[group], !touched.contains(id) {
                continue  // same words, same id, none of them changed: nothing to report
            }
            let id = inherited[group] ?? freshUtteranceID()
            let changedBefore = delta.changedWords.count
            for index in range {
                var word = store[index]
                word.utteranceID = id
                // Created by this update (ungrouped) → new; otherwise compare with the pre-update value.
                if store[index].utteranceID == Self.ungrouped {
                    delta.changedWords.append(word)
                } else if (update.before.isEmpty ? store[index] : update.before[word.id] ?? store[index]) != word {
                    delta.changedWords.append(word)
                }
                store[index].utteranceID = id
            }
            if sameMembers && delta.changedWords.count == changedBefore { continue }
            delta.upserted.append(Utterance(id: id, words: Array(store[range])))
        }

        var vanished = touched
        vanished.formUnion(regionCount.keys)
        vanished.subtract(used)
        delta.removed = vanished.sorted()
        return delta
    }
}
