import Testing
import TranscriptMerge

@Suite struct StableIDTests {
    /// Three utterances of A, B, A with pauses between them.
    func threeUtterances() -> TranscriptMerger {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 2), turn("t2", "B", 2, 4), turn("t3", "A", 4, 20)])
        _ = merger.upsertResult(id: "r1", words: [word("a", 1.0, 1.3), word("b", 1.5, 1.8)], isFinal: true)
        _ = merger.upsertResult(id: "r2", words: [word("c", 2.2, 2.5), word("d", 3.2, 3.5)], isFinal: true)
        _ = merger.upsertResult(id: "r3", words: [word("e", 4.1, 4.4), word("f", 4.6, 4.9)], isFinal: true)
        return merger
    }

    @Test func unrelatedEditElsewhereKeepsIDs() {
        var merger = threeUtterances()
        let ids = merger.utterances.map(\.id)
        #expect(ids.count == 3)

        // Relabel part of the last utterance.
        let delta = merger.upsertTurns([turn("t4", "C", 4.5, 6, confidence: 0.9)])
        #expect(merger.utterances.map(\.text) == ["a b", "c d", "e", "f"])
        #expect(Array(merger.utterances.map(\.id).prefix(3)) == ids)
        #expect(!delta.upserted.contains { $0.id == ids[0] || $0.id == ids[1] })
        #expect(delta.upserted.map(\.text) == ["e", "f"])
        #expect(delta.changedWords.map(\.text) == ["f"], "only f changed speaker and utterance")
        #expect(!ids.contains(merger.utterances[3].id), "the split-off part gets a fresh id")
    }

    @Test func appendingToLastUtteranceKeepsItsID() {
        var merger = threeUtterances()
        let last = merger.utterances[2].id
        let delta = merger.upsertResult(id: "r4", words: [word("g", 5.1, 5.4)], isFinal: false)
        #expect(delta.upserted.map(\.id) == [last])
        #expect(delta.upserted.first?.text == "e f g")
        #expect(delta.removed.isEmpty)
        #expect(delta.changedWords.map(\.text) == ["g"])
    }

    @Test func joiningTwoUtterancesKeepsTheLargerOnesID() {
        var merger = threeUtterances()
        _ = merger.upsertResult(id: "r4", words: [word("g", 5.1, 5.4), word("h", 5.6, 5.9)], isFinal: true)
        let ids = merger.utterances.map(\.id)
        // B's turn becomes A: the middle utterance joins its neighbours into one.
        let delta = merger.upsertTurns([turn("t2", "A", 2, 4)])
        #expect(merger.utterances.map(\.text) == ["a b c d e f g h"])
        #expect(merger.utterances[0].id == ids[2], "the old utterance sharing the most words (4) wins")
        #expect(Set(delta.removed) == [ids[0], ids[1]])
    }

    @Test func splittingKeepsIDOnTheLargerPart() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 10)])
        _ = merger.upsertResult(id: "r", words: (0..<5).map { word("w\($0)", Double($0) * 0.5, Double($0) * 0.5 + 0.3) },
                                isFinal: true)
        let id = merger.utterances[0].id
        _ = merger.upsertTurns([turn("t2", "B", 0, 0.9, confidence: 0.9)])  // w0, w1 become B
        #expect(merger.utterances.map(\.text) == ["w0 w1", "w2 w3 w4"])
        #expect(merger.utterances[1].id == id)
        #expect(merger.utterances[0].id > id, "fresh ids continue the counter")
    }
}
