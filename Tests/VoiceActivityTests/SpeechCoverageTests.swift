import Testing
import VoiceActivity

@Suite("SpeechCoverage")
struct SpeechCoverageTests {
    static func spans(_ pairs: [(Double, Double)]) -> [SpeechSegment] {
        pairs.map { SpeechSegment(startSeconds: $0.0, endSeconds: $0.1) }
    }

    @Test func overlappingReferenceTurnsCountOnce() {
        let score = SpeechCoverage(reference: Self.spans([(0, 4), (2, 6), (10, 12)]), detected: Self.spans([(1, 3), (5, 11), (20, 21)]))
        #expect(score.referenceSeconds == 8)
        #expect(score.detectedSeconds == 9)
        #expect(score.coveredSeconds == 2 + 1 + 1)
        #expect(score.falseAlarmSeconds == 5)
        #expect(score.missedSeconds == 4)
        #expect(score.coverage == 0.5)
    }

    @Test func unsortedAndAdjacentDetections() {
        let score = SpeechCoverage(reference: Self.spans([(0, 10)]), detected: Self.spans([(5, 10), (0, 5), (3, 4)]))
        #expect(score.coveredSeconds == 10)
        #expect(score.falseAlarmSeconds == 0)
    }

    @Test func totalsAdd() {
        let a = SpeechCoverage(reference: Self.spans([(0, 2)]), detected: Self.spans([(1, 3)]))
        let b = SpeechCoverage(reference: Self.spans([(0, 2)]), detected: [])
        let total = a + b
        #expect(total.referenceSeconds == 4)
        #expect(total.coveredSeconds == 1)
        #expect(total.coverage == 0.25)
        #expect(SpeechCoverage(reference: [], detected: Self.spans([(0, 1)])).coverage == 1)
    }
}
