import DiarizationScoring
import Testing

@Suite struct SettledLabelsTests {
    @Test func aRevisionCountsOnlyOnceItsDelayHasPassed() {
        var labels = SettledLabels(stepSeconds: 0.5)
        // 0–2 s first published as Speaker 1 at 2.5 s, then revised to Speaker 2 at 6 s (a live pass).
        labels.update(nowSeconds: 2.5, changes: [.init(id: "a", speaker: "1", startSeconds: 0, endSeconds: 2)])
        labels.update(nowSeconds: 3.0, changes: [.init(id: "b", speaker: "1", startSeconds: 2, endSeconds: 3)])
        labels.update(nowSeconds: 6.0, changes: [.init(id: "a", speaker: "2", startSeconds: 0, endSeconds: 2)])
        #expect(labels.segments(settleSeconds: 0) == [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 3)])
        #expect(labels.segments(settleSeconds: 3) == [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 3)])
        #expect(labels.segments(settleSeconds: 3.5) == [SpeakerSegment(speaker: "2", startSeconds: 0, endSeconds: 2),
                                                        SpeakerSegment(speaker: "1", startSeconds: 2, endSeconds: 3)])
    }

    @Test func aRemovedTurnLeavesItsPointsUnlabelledFromThenOn() {
        var labels = SettledLabels(stepSeconds: 0.5)
        labels.update(nowSeconds: 1, changes: [.init(id: "a", speaker: "1", startSeconds: 0, endSeconds: 1)])
        labels.update(nowSeconds: 4, changes: [.init(id: "a", speaker: "1", startSeconds: 0, endSeconds: 1, isRemoved: true)])
        #expect(labels.segments(settleSeconds: 1) == [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 1)])
        #expect(labels.segments(settleSeconds: 10).isEmpty)
    }

    @Test func aTurnCutShorterGivesBackOnlyTheCutPart() {
        var labels = SettledLabels(stepSeconds: 0.5)
        labels.update(nowSeconds: 2, changes: [.init(id: "a", speaker: "1", startSeconds: 0, endSeconds: 2)])
        // The same turn revised to end at 1 s, and the rest given to another turn of Speaker 3.
        labels.update(nowSeconds: 3, changes: [.init(id: "a", speaker: "1", startSeconds: 0, endSeconds: 1),
                                               .init(id: "c", speaker: "3", startSeconds: 1, endSeconds: 2)])
        #expect(labels.segments(settleSeconds: 5) == [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 1),
                                                      SpeakerSegment(speaker: "3", startSeconds: 1, endSeconds: 2)])
    }
}
