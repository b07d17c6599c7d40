/// Structural changes of one update: words and turns in and out of the sorted arrays, before labelling.
extension TranscriptMerger {
    /// Replaces the words of each result (last occurrence of an id wins).
    mutating func stageResults(_ incoming: [(String, [Word], Bool)], into update: inout PendingUpdate) {
        var lastIndex: [String: Int] = [:]
        if incoming.count > 1 {
            lastIndex.reserveCapacity(incoming.count)
            for (position, result) in incoming.enumerated() { lastIndex[result.0] = position }
            results.reserveCapacity(results.count + lastIndex.count)
        }
        func isLast(_ position: Int, _ id: String) -> Bool { incoming.count == 1 || lastIndex[id] == position }

        var removals: [Int] = []
        for (position, result) in incoming.enumerated() where isLast(position, result.0) {
            guard let entry = results[result.0] else { continue }
            for slot in entry.slots {
                let id = WordID(resultID: result.0, index: slot.index)
                let index = store.lowerBound(start: slot.startSeconds, end: slot.endSeconds, tie: id)
                guard index < store.count, store[index].id == id else { continue }
                update.remember(store[index])
                update.removedKeys.append((slot.startSeconds, slot.endSeconds, id))
                if store[index].speaker == nil { unlabelledCount -= 1 }
                removals.append(index)
            }
        }
        removals.sort()
        store.removeSorted(at: removals)

        var inserted: [LabelledWord] = []
        for (position, result) in incoming.enumerated() where isLast(position, result.0) {
            let (resultID, words, isFinal) = result
            var entry = ResultEntry()
            entry.slots.reserveCapacity(words.count)
            for (index, word) in words.enumerated() {
                let id = WordID(resultID: resultID, index: index)
                let span = sanitizedSpan(start: word.startSeconds, end: word.endSeconds)
                // A replaced word carries its old utterance id so that regrouping can let it keep it.
                let previous = update.before[id]
                inserted.append(LabelledWord(
                    id: id, text: word.text, startSeconds: span.start, endSeconds: span.end,
                    confidence: sanitizedConfidence(word.confidence), isFinal: isFinal, speaker: nil,
                    speakerConfidence: nil, utteranceID: previous?.utteranceID ?? Self.ungrouped
                ))
                entry.slots.append(WordSlot(index: index, startSeconds: span.start, endSeconds: span.end))
                maxWordDurationSeconds = max(maxWordDurationSeconds, span.end - span.start)
            }
            update.replacedResults[resultID] = words.count
            results[resultID] = words.isEmpty ? nil : entry
        }
        unlabelledCount += inserted.count
        if !inserted.isEmpty {
            if !isSorted(inserted) { inserted.sort { $0.precedes($1) } }
            update.insertedIndices = store.insertSorted(inserted)
        }
    }

    /// Removes turns by id, then adds or replaces `upserting` (last occurrence of an id wins). Every turn
    /// extent that appears or disappears, widened by the tolerance, is marked for relabelling.
    mutating func stageTurns(upserting: [SpeakerTurn], removing: [String], into update: inout PendingUpdate) {
        let tolerance = config.effectiveToleranceSeconds
        var incoming: [String: SpeakerTurn] = [:]
        for turn in upserting { incoming[turn.id] = sanitized(turn) }

        var removals: [Int] = []
        func stageRemoval(of old: SpeakerTurn) {
            let index = turnList.lowerBound(start: old.startSeconds, end: old.endSeconds, tie: old.id)
            guard index < turnList.count, turnList[index].id == old.id else { return }
            removals.append(index)
            update.labelIntervals.append((old.startSeconds - tolerance, old.endSeconds + tolerance))
        }
        for id in Set(removing) {
            guard let old = turnByID.removeValue(forKey: id) else { continue }
            stageRemoval(of: old)
        }
        var inserted: [SpeakerTurn] = []
        for turn in incoming.values {
            if let old = turnByID[turn.id] {
                if old == turn { continue }
                stageRemoval(of: old)
            }
            turnByID[turn.id] = turn
            inserted.append(turn)
            update.labelIntervals.append((turn.startSeconds - tolerance, turn.endSeconds + tolerance))
            maxTurnDurationSeconds = max(maxTurnDurationSeconds, turn.endSeconds - turn.startSeconds)
        }
        removals.sort()
        turnList.removeSorted(at: removals)
        inserted.sort { $0.precedes($1) }
        turnList.insertSorted(inserted)
    }

    private func isSorted(_ words: [LabelledWord]) -> Bool {
        var index = 1
        while index < words.count {
            if !words[index - 1].precedes(words[index]) { return false }
            index += 1
        }
        return true
    }
}
