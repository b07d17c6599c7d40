import Testing
import TranscriptMerge

/// The session's end: words no turn reaches take the nearest turn's speaker, flagged as guessed.
@Suite struct StrandedWordsTests {
    /// A before 2 s and B from 10 s; "far" (4.0–4.5) is 2 s past A's end and 5.5 s before B, "late"
    /// lies beyond the audio (12 s), "near" is within the tolerance of B and labelled already.
    @Test func aWordNoTurnReachesTakesTheNearestTurnAtTheEnd() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("a", "A", 0, 2), turn("b", "B", 10, 11)])
        _ = merger.upsertResult(id: "r", words: [word("far", 4.0, 4.5), word("near", 9.7, 9.9), word("late", 12.5, 13)], isFinal: true)
        #expect(merger.words.map(\.speaker) == [nil, "B", nil])
        #expect(merger.unlabelledWordCount == 2)

        let (delta, stranded) = merger.labelStrandedWords(audioEndSeconds: 12)
        #expect(stranded == [merger.words[0].id], "far only: late is past the audio")
        #expect(merger.words.map(\.speaker) == ["A", "B", nil], "late is past the audio: no provider heard it")
        #expect(delta.changedWords.map(\.text) == ["far"])
        #expect(merger.unlabelledWordCount == 1)
        // 2 s from A, 1.5 s beyond the 0.5 s tolerance: 0.25 / 2.5.
        #expect(abs((merger.words[0].speakerConfidence ?? 0) - 0.1) < 1e-9)
        #expect(merger.utterances.contains { $0.speaker == "A" && $0.words.map(\.text) == ["far"] })
    }

    /// Without turns (provider `none`) nothing is guessed; after the end the usual rule is back, so a
    /// turn that changes near a guessed word decides it again.
    @Test func withoutTurnsNothingChangesAndTheRuleLastsOneCall() {
        var none = TranscriptMerger()
        _ = none.upsertResult(id: "r", words: [word("x", 1, 1.5)], isFinal: true)
        #expect(none.labelStrandedWords(audioEndSeconds: 10).delta.isEmpty)
        #expect(none.words[0].speaker == nil)

        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("a", "A", 0, 1)])
        _ = merger.upsertResult(id: "r", words: [word("x", 3, 3.5)], isFinal: true)
        _ = merger.labelStrandedWords(audioEndSeconds: 10)
        #expect(merger.words[0].speaker == "A")
        _ = merger.upsertTurns([turn("b", "B", 3.6, 5)])
        #expect(merger.words[0].speaker == "B", "a turn within reach now: the ordinary nearest-turn rule")
        _ = merger.removeTurns(ids: ["b"])
        #expect(merger.words[0].speaker == nil, "no turn within reach and the session's end is past")
    }
}
