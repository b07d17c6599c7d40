/// Second half of an update: relabel what the staged changes can affect, regroup the affected region,
/// hand out utterance ids and describe the difference.
extension TranscriptMerger {
    mutating func commit(_ update: inout PendingUpdate) -> TranscriptDelta {
        widenForSimultaneousWords(&update)
        var dirty: [Int] = []
        let covered = relabelIntervals(update.labelIntervals, update: &update, dirty: &dirty)

        // New words are always dirty; label those no interval scan already labelled.
        if covered.isEmpty && dirty.isEmpty {
            // Common live case: only new words, no turn changed. Relabelling can only mark them dirty.
            for index in update.insertedIndices { relabel(at: index, update: &update, dirty: &dirty) }
            dirty = update.insertedIndices
        } else {
            for index in update.insertedIndices {
                if !contains(covered, index) { relabel(at: index, update: &update, dirty: &dirty) }
                dirty.append(index)
            }
            dirty.sort()
            dirty = dedupedSorted(dirty)
        }

        var removalPoints = update.removedKeys.map { store.lowerBound(start: $0.start, end: $0.end, tie: $0.id) }
        removalPoints.sort()

        var touched = Set<UtteranceID>()
        for old in update.before.values where old.utteranceID != Self.ungrouped {
            touched.insert(old.utteranceID)
        }

        // Words gone for good: their result was replaced by fewer words.
        var removedWords: [WordID] = []
        var vanishedFrom: [UtteranceID: Int] = [:]
        for (id, old) in update.before {
            if let count = update.replacedResults[id.resultID], id.index >= count {
                removedWords.append(id)
                vanishedFrom[old.utteranceID, default: 0] += 1
            }
        }

        let groups = regroupedRanges(dirty: dirty, removalPoints: removalPoints, touched: touched)
        var delta = assignIDs(groups: groups, update: update, touched: touched, vanishedFrom: vanishedFrom)
        delta.removedWords = removedWords.sorted()
        return delta
    }

    /// Relabels every word whose start lies in [interval start − longest word, interval end] for each
    /// (merged) interval, returning the index ranges scanned.
    private mutating func relabelIntervals(
        _ intervals: [(start: Double, end: Double)], update: inout PendingUpdate, dirty: inout [Int]
    ) -> [Range<Int>] {
        guard !intervals.isEmpty, !store.isEmpty else { return [] }
        let sorted = intervals.sorted { $0.start < $1.start }
        var merged: [(start: Double, end: Double)] = []
        for interval in sorted {
            if let last = merged.last, interval.start <= last.end {
                merged[merged.count - 1].end = max(last.end, interval.end)
            } else {
                merged.append(interval)
            }
        }
        var covered: [Range<Int>] = []
        var floor = 0
        for interval in merged {
            let from = max(floor, store.firstIndex(startingAtOrAfter: interval.start - maxWordDurationSeconds))
            let to = store.firstIndex(startingAfter: interval.end)
            guard from < to else { continue }
            for index in from..<to { relabel(at: index, update: &update, dirty: &dirty) }
            covered.append(from..<to)
            floor = to
        }
        return covered
    }

    /// Recomputes one word's speaker; records it as dirty when the label changed.
    private mutating func relabel(at index: Int, update: inout PendingUpdate, dirty: inout [Int]) {
        let word = store[index]
        let label = label(at: index)
        guard label.speaker != word.speaker || label.confidence != word.speakerConfidence else { return }
        // A word created by this update (still ungrouped) has no earlier value to remember.
        if word.utteranceID != Self.ungrouped { update.remember(word) }
        if word.speaker == nil && label.speaker != nil { unlabelledCount -= 1 }
        if word.speaker != nil && label.speaker == nil { unlabelledCount += 1 }
        store[index].speaker = label.speaker
        store[index].speakerConfidence = label.confidence
        dirty.append(index)
    }

    /// Once words have overlapped in time, a label depends on words and turns around it (see
    /// `TranscriptMerger+SimultaneousWords`): every changed turn, new word and removed word relabels the words
    /// within `simultaneousReachSeconds` of it.
    private mutating func widenForSimultaneousWords(_ update: inout PendingUpdate) {
        guard config.effectiveSimultaneousStretchSeconds != nil else { return }
        if !hasSimultaneousWords {
            hasSimultaneousWords = update.insertedIndices.contains { collidesWithAnotherWord(at: $0) }
            guard hasSimultaneousWords else { return }
        }
        let reach = simultaneousReachSeconds
        var widened = update.labelIntervals.map { (start: $0.start - reach, end: $0.end + reach) }
        for index in update.insertedIndices {
            widened.append((store[index].startSeconds - reach, store[index].endSeconds + reach))
        }
        for key in update.removedKeys { widened.append((key.start - reach, key.end + reach)) }
        update.labelIntervals = widened
    }

    private func contains(_ ranges: [Range<Int>], _ index: Int) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound <= index { low = mid + 1 } else { high = mid }
        }
        return low < ranges.count && ranges[low].contains(index)
    }

    private func dedupedSorted(_ values: [Int]) -> [Int] {
        var output: [Int] = []
        output.reserveCapacity(values.count)
        for value in values where output.last != value { output.append(value) }
        return output
    }
}
