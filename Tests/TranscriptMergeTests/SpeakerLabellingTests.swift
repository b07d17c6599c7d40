import Testing
import TranscriptMerge

@Suite struct SpeakerLabellingTests {
    @Test func majorityOverlapWins() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 1.3), turn("t2", "B", 1.3, 3)])
        _ = merger.upsertResult(id: "r", words: [word("hello", 1.0, 2.0)], isFinal: true)
        let labelled = merger.words[0]
        #expect(labelled.speaker == "B")
        // B covers 0.7 s of the 1 s word.
        #expect(abs((labelled.speakerConfidence ?? 0) - 0.7) < 1e-9)
    }

    @Test func overlapIsSummedPerSpeakerAcrossTurns() {
        var merger = TranscriptMerger()
        // A: 0.3 + 0.3 = 0.6 s in two turns; B: one turn of 0.4 s (the largest single turn).
        _ = merger.upsertTurns([
            turn("a1", "A", 0, 1.3), turn("b1", "B", 1.3, 1.7), turn("a2", "A", 1.7, 5),
        ])
        _ = merger.upsertResult(id: "r", words: [word("x", 1.0, 2.0)], isFinal: true)
        #expect(merger.words[0].speaker == "A")
        #expect(abs((merger.words[0].speakerConfidence ?? 0) - 0.6) < 1e-9)
    }

    /// Times are binary-exact so that the two overlaps are exactly equal.
    @Test func boundaryStraddlingWordTieBreaksByConfidenceThenName() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 1), turn("t2", "B", 1, 2)])
        _ = merger.upsertResult(id: "r", words: [word("x", 0.75, 1.25)], isFinal: true)
        #expect(merger.words[0].speaker == "A", "equal overlap, no confidences: smaller name")
        #expect(abs((merger.words[0].speakerConfidence ?? 0) - 0.5) < 1e-9)

        _ = merger.upsertTurns([turn("t2", "B", 1, 2, confidence: 0.9)])
        #expect(merger.words[0].speaker == "B", "equal overlap: the more confident turn wins")

        // Slightly more overlap beats confidence.
        _ = merger.upsertResult(id: "r", words: [word("x", 0.7, 1.25)], isFinal: true)
        #expect(merger.words[0].speaker == "A")
    }

    @Test func zeroDurationWordIsAPoint() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 1), turn("t2", "B", 1, 2)])
        _ = merger.upsertResult(id: "r", words: [word("a", 0.5, 0.5), word("b", 1.0, 1.0)], isFinal: true)
        #expect(merger.words.map(\.speaker) == ["A", "B"])
        #expect(merger.words.map(\.speakerConfidence) == [1, 1])
    }

    @Test func gapWordTakesNearestTurnWithinTolerance() {
        var merger = TranscriptMerger()  // tolerance 0.5
        _ = merger.upsertTurns([turn("t1", "A", 0, 1), turn("t2", "B", 1.6, 3)])
        _ = merger.upsertResult(id: "r", words: [word("x", 1.2, 1.3)], isFinal: true)
        let labelled = merger.words[0]
        #expect(labelled.speaker == "A", "A is 0.2 s away, B 0.3 s")
        let confidence = labelled.speakerConfidence ?? 0
        // Documented: 0.5 × (1 − 0.5 × 0.2 / 0.5) = 0.4, below any fully covered word.
        #expect(abs(confidence - 0.4) < 1e-9)
        #expect(merger.unlabelledWordCount == 0)
    }

    @Test func wordBeyondToleranceStaysUntilATurnArrives() {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([turn("t1", "A", 0, 1)])
        var delta = merger.upsertResult(id: "r", words: [word("late", 3, 3.4)], isFinal: true)
        #expect(delta.changedWords.count == 1)
        #expect(delta.changedWords[0].speaker == nil)
        #expect(merger.unlabelledWordCount == 1)
        #expect(merger.utterances.count == 1, "the unlabelled word is still in the transcript")
        #expect(merger.utterances[0].speaker == nil)

        // A turn far away changes nothing.
        delta = merger.upsertTurns([turn("t2", "B", 10, 11)])
        #expect(delta.isEmpty)

        // A turn within tolerance labels it; the id of its utterance is kept.
        let before = merger.utterances[0].id
        delta = merger.upsertTurns([turn("t3", "C", 3.6, 5)])
        #expect(delta.changedWords.map(\.speaker) == ["C"])
        #expect(delta.upserted.map(\.id) == [before])
        #expect(merger.unlabelledWordCount == 0)

        // An overlapping turn takes over from the nearest one.
        delta = merger.upsertTurns([turn("t4", "D", 3, 3.5)])
        #expect(merger.words[0].speaker == "D")
        #expect(merger.words[0].speakerConfidence == 1)
    }

    @Test func invalidTimesDoNotCrashOrDropWords() {
        var merger = TranscriptMerger(config: MergeConfig(nearestTurnToleranceSeconds: .nan, utteranceGapSeconds: -1))
        _ = merger.upsertTurns([
            turn("t1", "A", .nan, 2), turn("t2", "B", 5, 4), turn("t3", "C", -.infinity, .infinity),
        ])
        _ = merger.upsertResult(id: "r", words: [
            word("a", .nan, .nan), word("b", 3, 1), word("c", .infinity, 1), word("d", -2, -1),
        ], isFinal: false)
        #expect(merger.words.count == 4)
        #expect(merger.utterances.flatMap(\.words).count == 4)
        _ = merger.removeTurns(ids: ["t1", "t2", "t3", "nope"])
        #expect(merger.turns.isEmpty)
        #expect(merger.unlabelledWordCount == 4)
    }
}
