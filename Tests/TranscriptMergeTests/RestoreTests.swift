import Testing
import TranscriptMerge

@Suite struct RestoreTests {
    @Test func restoreRoundTripKeepsIDsAndContinuesTheCounter() {
        let scenario = RandomScenario(seed: 11, words: 50, turns: 20)
        var original = TranscriptMerger()
        _ = scenario.runIncremental(into: &original)

        var restored = TranscriptMerger()
        restored.restore(words: original.words.shuffled(), turns: original.turns.reversed())
        #expect(restored.utterances == original.utterances)
        #expect(restored.words == original.words)
        #expect(restored.turns == original.turns)
        #expect(restored.unlabelledWordCount == original.unlabelledWordCount)

        // Both continue identically, including fresh ids.
        let words = [word("late", 100, 100.3), word("later", 100.4, 100.6)]
        let a = original.upsertResult(id: "new", words: words, isFinal: true)
        let b = restored.upsertResult(id: "new", words: words, isFinal: true)
        #expect(a.upserted == b.upserted)
        #expect(a.changedWords == b.changedWords)
        let maxOld = original.utterances.dropLast().map(\.id).max()!
        #expect(b.upserted[0].id > maxOld)

        let turnDelta = (original.upsertTurns([turn("z", "S9", 99, 101)]), restored.upsertTurns([turn("z", "S9", 99, 101)]))
        #expect(turnDelta.0.upserted == turnDelta.1.upserted)
        #expect(turnDelta.0.removed == turnDelta.1.removed)
    }

    @Test func restoreRepairsDuplicateUtteranceIDs() {
        var merger = TranscriptMerger()
        let id = UtteranceID(5)
        func stored(_ name: String, _ index: Int, _ start: Double) -> LabelledWord {
            LabelledWord(id: WordID("r", index), text: name, startSeconds: start, endSeconds: start + 0.2,
                         confidence: nil, isFinal: true, speaker: "A", speakerConfidence: 1, utteranceID: id)
        }
        // Two separate runs carry id 5 (the middle word belongs to another utterance).
        var middle = stored("b", 1, 1)
        middle.utteranceID = UtteranceID(2)
        merger.restore(words: [stored("a", 0, 0), middle, stored("c", 2, 2)], turns: [])
        let ids = merger.utterances.map(\.id)
        #expect(ids.count == 3)
        #expect(Set(ids).count == 3)
        #expect(ids[0] == id)
        #expect(ids[2] > id)
    }
}
