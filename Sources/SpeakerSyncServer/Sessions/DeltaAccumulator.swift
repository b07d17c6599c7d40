import TranscriptMerge

extension TranscriptDelta {
    /// This delta followed by `later`, as one: what a device must apply to go from before this delta
    /// to after `later`. Used when one input (a batch of provider turns with removals) makes several
    /// merger calls.
    func followed(by later: TranscriptDelta) -> TranscriptDelta {
        if isEmpty { return later }
        if later.isEmpty { return self }
        var upsertedByID: [UtteranceID: Utterance] = [:]
        var order: [UtteranceID] = []
        for utterance in upserted + later.upserted {
            if upsertedByID.updateValue(utterance, forKey: utterance.id) == nil { order.append(utterance.id) }
        }
        let laterRemoved = Set(later.removed)
        let laterUpserted = Set(later.upserted.map(\.id))
        var removedIDs = removed.filter { !laterUpserted.contains($0) }
        removedIDs += later.removed.filter { !removedIDs.contains($0) }
        let keptUpserts = order.filter { !laterRemoved.contains($0) }.map { upsertedByID[$0]! }

        var wordsByID: [WordID: LabelledWord] = [:]
        var wordOrder: [WordID] = []
        for word in changedWords + later.changedWords {
            if wordsByID.updateValue(word, forKey: word.id) == nil { wordOrder.append(word.id) }
        }
        let laterRemovedWords = Set(later.removedWords)
        let laterChangedWords = Set(later.changedWords.map(\.id))
        var removedWordIDs = removedWords.filter { !laterChangedWords.contains($0) }
        removedWordIDs += later.removedWords.filter { !removedWordIDs.contains($0) }
        let keptWords = wordOrder.filter { !laterRemovedWords.contains($0) }.map { wordsByID[$0]! }

        var merged = TranscriptDelta()
        merged.upserted = keptUpserts
        merged.removed = removedIDs
        merged.changedWords = keptWords
        merged.removedWords = removedWordIDs
        return merged
    }
}
