import DiarizationScoring
import Testing

func turn(_ speaker: String, _ start: Double, _ end: Double) -> SpeakerSegment {
    SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end)
}

func span(_ start: Double, _ end: Double) -> TimeSpan { TimeSpan(startSeconds: start, endSeconds: end) }

func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

@Suite struct DiarizationErrorRateTests {
    let reference = [turn("A", 0, 4), turn("B", 3, 7), turn("A", 8, 10), turn("C", 9, 12)]

    @Test func perfectHypothesisScoresZero() {
        let score = DiarizationErrorRate.score(reference: reference, hypothesis: reference, uem: [span(0, 15)])
        #expect(score.errorRate == 0)
        #expect(close(score.referenceSeconds, 4 + 4 + 2 + 3))
        #expect(score.mapping == ["A": "A", "B": "B", "C": "C"])
    }

    @Test func emptyHypothesisMissesEverything() {
        let score = DiarizationErrorRate.score(reference: reference, hypothesis: [], uem: [span(0, 15)])
        #expect(close(score.missedSeconds, 13))
        #expect(close(score.errorRate, 1))
        #expect(score.falseAlarmSeconds == 0 && score.confusionSeconds == 0)
    }

    @Test func renamingHypothesisSpeakersChangesNothing() {
        let renamed = reference.map { turn(["A": "spk2", "B": "spk0", "C": "spk1"][$0.speaker]!, $0.startSeconds, $0.endSeconds) }
        let score = DiarizationErrorRate.score(reference: reference, hypothesis: renamed, uem: [span(0, 15)])
        #expect(score.errorRate == 0)
        #expect(score.mapping == ["spk2": "A", "spk0": "B", "spk1": "C"])
    }

    @Test func confusionUsesTheBestOneToOneMapping() {
        // X covers A's 10 s and B's 4 s; Y covers B's 6 s: X→A, Y→B, 4 s confused.
        let score = DiarizationErrorRate.score(
            reference: [turn("A", 0, 10), turn("B", 10, 20)],
            hypothesis: [turn("X", 0, 14), turn("Y", 14, 20)], uem: [span(0, 20)])
        #expect(score.mapping == ["X": "A", "Y": "B"])
        #expect(close(score.confusionSeconds, 4))
        #expect(close(score.errorRate, 0.2))
    }

    @Test func collarRemovesHalfItsWidthOnEachSideOfReferenceBoundaries() {
        let reference = [turn("A", 0, 10)]
        let hypothesis = [turn("A", 0, 10.5)]
        let uem = [span(0, 20)]
        let none = DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: uem)
        #expect(close(none.falseAlarmSeconds, 0.5) && close(none.errorRate, 0.05))
        // ±0.25 s: [0, 0.25] and [9.75, 10.25] are not scored, 0.25 s of false alarm remain.
        let half = DiarizationErrorRate.score(
            reference: reference, hypothesis: hypothesis, uem: uem, config: DERConfig(collarSeconds: 0.5))
        #expect(close(half.referenceSeconds, 9.5))
        #expect(close(half.falseAlarmSeconds, 0.25))
        // ±0.5 s swallows the whole overshoot.
        let full = DiarizationErrorRate.score(
            reference: reference, hypothesis: hypothesis, uem: uem, config: DERConfig(collarSeconds: 1))
        #expect(close(full.referenceSeconds, 9))
        #expect(full.errorRate == 0)
    }

    @Test func overlappedSpeechCountsOncePerSpeaker() {
        let reference = [turn("A", 0, 10), turn("B", 5, 10)]
        // One hypothesis speaker over both: the second speaker in [5, 10] is missed.
        let single = DiarizationErrorRate.score(reference: reference, hypothesis: [turn("X", 0, 10)], uem: [span(0, 10)])
        #expect(close(single.referenceSeconds, 15))
        #expect(close(single.missedSeconds, 5))
        #expect(close(single.errorRate, 5.0 / 15))
        // Skipping overlap scores only [0, 5], where X is right.
        let skipped = DiarizationErrorRate.score(
            reference: reference, hypothesis: [turn("X", 0, 10)], uem: [span(0, 10)], config: DERConfig(skipOverlap: true))
        #expect(close(skipped.referenceSeconds, 5))
        #expect(skipped.errorRate == 0)
        // Two hypothesis speakers where the reference has one: false alarm, not confusion.
        let doubled = DiarizationErrorRate.score(
            reference: [turn("A", 0, 10)], hypothesis: [turn("X", 0, 10), turn("Y", 2, 4)], uem: [span(0, 10)])
        #expect(close(doubled.falseAlarmSeconds, 2))
        #expect(doubled.confusionSeconds == 0 && doubled.missedSeconds == 0)
    }

    @Test func withoutUEMTheSpanOfBothAnnotationsIsScored() {
        let reference = [turn("A", 2, 6)]
        let hypothesis = [turn("A", 2, 6), turn("B", 8, 9)]
        let implicit = DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: nil)
        #expect(close(implicit.falseAlarmSeconds, 1))
        let cropped = DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: [span(0, 7)])
        #expect(cropped.falseAlarmSeconds == 0)
        let nothing = DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: [])
        #expect(nothing.referenceSeconds == 0 && nothing.errorRate == 0)
    }

    @Test func noReferenceSpeechRatesOneWhenAnythingWasDetected() {
        #expect(DiarizationErrorRate.score(reference: [], hypothesis: [turn("X", 0, 1)], uem: nil).errorRate == 1)
        #expect(DiarizationErrorRate.score(reference: [], hypothesis: [], uem: nil).errorRate == 0)
    }

    @Test func totalsAddSecondsAcrossFiles() {
        let first = DiarizationErrorRate.score(reference: [turn("A", 0, 10)], hypothesis: [], uem: nil)
        let second = DiarizationErrorRate.score(
            reference: [turn("A", 0, 30)], hypothesis: [turn("A", 0, 30)], uem: nil)
        let total = first + second
        #expect(close(total.referenceSeconds, 40))
        #expect(close(total.errorRate, 0.25))
    }
}

@Suite struct JaccardErrorRateTests {
    @Test func averagesPerReferenceSpeakerJaccardErrors() {
        let result = JaccardErrorRate.score(
            reference: [turn("A", 0, 10), turn("B", 10, 20)],
            hypothesis: [turn("X", 0, 12), turn("Y", 12, 20)], uem: [span(0, 20)])
        // A↔X: 10 shared of 12 in the union; B↔Y: 8 of 10.
        #expect(close(result.perReferenceSpeaker["A"] ?? -1, 1 - 10.0 / 12))
        #expect(close(result.perReferenceSpeaker["B"] ?? -1, 0.2))
        #expect(close(result.errorRate, ((1 - 10.0 / 12) + 0.2) / 2))
        #expect(result.mapping == ["A": "X", "B": "Y"])
    }

    @Test func unmappedReferenceSpeakersCountOneAndExtraHypothesisSpeakersCostNothing() {
        let missing = JaccardErrorRate.score(reference: [turn("A", 0, 10), turn("B", 10, 12)], hypothesis: [turn("X", 0, 10)], uem: nil)
        #expect(missing.perReferenceSpeaker == ["A": 0, "B": 1])
        #expect(close(missing.errorRate, 0.5))
        let extra = JaccardErrorRate.score(
            reference: [turn("A", 0, 10)], hypothesis: [turn("X", 0, 10), turn("Z", 20, 30)], uem: [span(0, 30)])
        #expect(extra.errorRate == 0)
        #expect(DiarizationErrorRate.score(
            reference: [turn("A", 0, 10)], hypothesis: [turn("X", 0, 10), turn("Z", 20, 30)], uem: [span(0, 30)]).errorRate == 1)
    }

    @Test func noScoredReferenceSpeakerRatesOneAsPyannoteDoes() {
        #expect(JaccardErrorRate.score(reference: [], hypothesis: [], uem: nil).errorRate == 1)
        #expect(JERResult.pooled([]) == 1)
    }
}
