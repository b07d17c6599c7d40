import Testing
import TranscriptMerge

@Suite struct UtteranceGroupingTests {
    @Test func splitsByGap() {
        var merger = TranscriptMerger()  // gap 1.0 s
        _ = merger.upsertTurns([turn("t1", "A", 0, 10)])
        _ = merger.upsertResult(id: "r", words: [
            word("a", 0, 0.5), word("b", 1.4, 1.6),  // gap 0.9: same utterance
            word("c", 2.6, 3.0),  // gap exactly 1.0: new utterance
            word("d", 5.0, 5.2),
        ], isFinal: true)
        #expect(merger.utterances.map(\.text) == ["a b", "c", "d"])
        #expect(merger.utterances.map(\.speaker) == ["A", "A", "A"])
        #expect(merger.utterances[0].startSeconds == 0)
        #expect(merger.utterances[0].endSeconds == 1.6)
    }

    @Test func gapIsMeasuredFromLatestEnd() {
        var merger = TranscriptMerger()
        _ = merger.upsertResult(id: "r", words: [
            word("long", 0, 5), word("short", 0.5, 0.6), word("next", 5.5, 6),
        ], isFinal: true)
        #expect(merger.utterances.map(\.text) == ["long short next"])
        #expect(merger.utterances[0].endSeconds == 6)
    }

    @Test func splitsBySpeakerIncludingUnlabelled() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 1), turn("t2", "B", 1, 2), turn("t3", "A", 5, 6)])
        _ = merger.upsertResult(id: "r", words: [
            word("a1", 0.1, 0.4), word("a2", 0.5, 0.9), word("b1", 1.1, 1.5), word("n1", 3.0, 3.3),
            word("n2", 3.4, 3.6), word("a3", 5.1, 5.5),
        ], isFinal: true)
        #expect(merger.utterances.map(\.text) == ["a1 a2", "b1", "n1 n2", "a3"])
        #expect(merger.utterances.map(\.speaker) == ["A", "B", nil, "A"])
        let ids = merger.utterances.map(\.id)
        #expect(Set(ids).count == ids.count)
        for utterance in merger.utterances {
            #expect(utterance.words.allSatisfy { $0.utteranceID == utterance.id })
        }
    }

    @Test func customGap() {
        var merger = TranscriptMerger(config: MergeConfig(nearestTurnToleranceSeconds: 0.5, utteranceGapSeconds: 0.2))
        _ = merger.upsertResult(id: "r", words: [word("a", 0, 0.5), word("b", 0.8, 1.0)], isFinal: true)
        #expect(merger.utterances.map(\.text) == ["a", "b"])
    }
}
