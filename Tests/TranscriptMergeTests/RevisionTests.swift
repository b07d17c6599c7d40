import Testing
import TranscriptMerge

@Suite struct RevisionTests {
    @Test func volatileResultReplacedByFewerWordsReportsRemovedWords() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 5)])
        var delta = merger.upsertResult(
            id: "r1", words: [word("the", 0, 0.3), word("cat", 0.4, 0.7), word("sad", 0.8, 1.0)], isFinal: false)
        #expect(delta.changedWords.count == 3)
        let utteranceID = merger.utterances[0].id

        delta = merger.upsertResult(id: "r1", words: [word("the", 0, 0.3), word("catsat", 0.4, 1.0)], isFinal: true)
        #expect(delta.removedWords == [WordID("r1", 2)])
        #expect(Set(delta.changedWords.map(\.id)) == [WordID("r1", 0), WordID("r1", 1)], "isFinal changed on both")
        #expect(delta.changedWords.allSatisfy { $0.isFinal })
        #expect(merger.words.map(\.text) == ["the", "catsat"])
        #expect(merger.utterances.map(\.text) == ["the catsat"])
        #expect(merger.utterances[0].id == utteranceID, "the utterance keeps its id through the replacement")
        #expect(delta.upserted.map(\.id) == [utteranceID])
        #expect(delta.removed.isEmpty)
    }

    @Test func resultReplacedByMoreWordsAddsThem() {
        var merger = TranscriptMerger()
        _ = merger.upsertResult(id: "r1", words: [word("hi", 0, 0.3)], isFinal: false)
        let delta = merger.upsertResult(
            id: "r1", words: [word("hi", 0, 0.3), word("there", 0.4, 0.6), word("you", 0.7, 0.9)], isFinal: false)
        #expect(delta.removedWords.isEmpty)
        #expect(delta.changedWords.map(\.id) == [WordID("r1", 1), WordID("r1", 2)], "word 0 is identical")
        #expect(merger.utterances.map(\.text) == ["hi there you"])
    }

    @Test func identicalReplacementIsEmptyDelta() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 5)])
        let words = [word("a", 0, 0.3), word("b", 0.4, 0.7)]
        _ = merger.upsertResult(id: "r1", words: words, isFinal: true)
        #expect(merger.upsertResult(id: "r1", words: words, isFinal: true).isEmpty)
        #expect(merger.upsertTurns([turn("t1", "A", 0, 5)]).isEmpty)
    }

    @Test func emptyReplacementRemovesTheResultAndItsUtterance() {
        var merger = TranscriptMerger()
        _ = merger.upsertResult(id: "r1", words: [word("a", 0, 0.3)], isFinal: false)
        _ = merger.upsertResult(id: "r2", words: [word("b", 5, 5.3)], isFinal: false)
        let gone = merger.utterances[0].id
        let delta = merger.upsertResult(id: "r1", words: [], isFinal: true)
        #expect(delta.removedWords == [WordID("r1", 0)])
        #expect(delta.removed == [gone])
        #expect(delta.upserted.isEmpty)
        #expect(merger.words.map(\.text) == ["b"])
    }

    @Test func turnRevisionRelabelsPastWords() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 2), turn("t2", "B", 2, 4)])
        _ = merger.upsertResult(
            id: "r", words: [word("one", 0.2, 0.5), word("two", 1.2, 1.5), word("three", 2.2, 2.5)], isFinal: true)
        #expect(merger.utterances.map(\.speaker) == ["A", "B"])

        // The provider revises t1: its second half is actually B.
        let delta = merger.upsertTurns([turn("t1", "A", 0, 1), turn("t3", "B", 1, 2)])
        #expect(merger.words.map(\.speaker) == ["A", "B", "B"])
        #expect(merger.utterances.map(\.text) == ["one", "two three"])
        #expect(delta.changedWords.contains { $0.text == "two" && $0.speaker == "B" })
        #expect(!delta.changedWords.contains { $0.text == "one" }, "word one kept speaker and utterance")
        #expect(merger.turns.map(\.id) == ["t1", "t3", "t2"])
    }

    @Test func removingTurnsUnlabelsButKeepsWords() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 2)])
        _ = merger.upsertResult(id: "r", words: [word("one", 0.2, 0.5), word("two", 1.2, 1.5)], isFinal: true)
        let delta = merger.removeTurns(ids: ["t1"])
        #expect(delta.changedWords.map(\.speaker) == [nil, nil])
        #expect(merger.words.count == 2)
        #expect(merger.unlabelledWordCount == 2)
        #expect(merger.utterances.map(\.speaker) == [nil])
    }

    @Test func mergeSpeakerRelabelsPastAndFuture() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 2), turn("t2", "B", 2, 4)])
        _ = merger.upsertResult(id: "r1", words: [word("one", 1.5, 1.9), word("two", 2.1, 2.5)], isFinal: true)
        #expect(merger.utterances.count == 2)

        let delta = merger.mergeSpeaker("B", into: "A")
        #expect(merger.words.map(\.speaker) == ["A", "A"])
        #expect(merger.utterances.map(\.text) == ["one two"])
        #expect(delta.removed.count == 1)
        #expect(merger.turns.map(\.speaker) == ["A", "A"])

        // A later turn from the provider still says B: it is relabelled too.
        _ = merger.upsertTurns([turn("t3", "B", 4, 6)])
        _ = merger.upsertResult(id: "r2", words: [word("three", 4.2, 4.5)], isFinal: true)
        #expect(merger.words.map(\.speaker) == ["A", "A", "A"])
        #expect(merger.turns.map(\.speaker) == ["A", "A", "A"])
        #expect(merger.mergeSpeaker("B", into: "A").isEmpty, "already merged")
    }

    @Test func mergeSpeakerChainsAndReverses() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 2), turn("t2", "B", 2, 4), turn("t3", "C", 4, 6)])
        _ = merger.mergeSpeaker("A", into: "B")
        _ = merger.mergeSpeaker("B", into: "C")
        #expect(Set(merger.turns.map(\.speaker)) == ["C"])
        _ = merger.upsertTurns([turn("t4", "A", 6, 8)])
        #expect(merger.turns.last?.speaker == "C")
    }
}
