import DiarizationScoring
import SpeakerSyncStore
import Testing
import TranscriptMerge
@testable import SpeakerSyncServer

/// The comparison's arithmetic on labellings built by hand.
@Suite struct LabellingComparisonTests {
    /// Ten words, one every 2 s from 1 s; `speaker(at:)` labels each by its time.
    static func labelling(_ name: String, turns: [(String, Double, Double)]) -> LabellingRecord {
        let words = (0..<10).map { index -> WordLabel in
            let time = 1 + 2 * Double(index)
            let speaker = turns.first { $0.1 <= time && time < $0.2 }?.0
            return WordLabel(id: WordID(resultID: "r", index: index), speaker: speaker)
        }
        return LabellingRecord(name: name, provider: name, source: .live, isComplete: true,
                               turns: turns.enumerated().map { SpeakerTurn(id: "\($0.offset)", speaker: $0.element.0, startSeconds: $0.element.1, endSeconds: $0.element.2) },
                               words: words)
    }

    @Test func theSameTurnsUnderOtherNamesAgreeCompletely() {
        let a = Self.labelling("a", turns: [("Speaker 1", 0, 10), ("Speaker 2", 10, 20)])
        let b = Self.labelling("b", turns: [("x", 0, 10), ("y", 10, 20)])
        let pair = try! #require(LabellingComparison(labellings: [a, b], reference: nil, audioSeconds: 20).pairs.first)
        #expect(pair.der.errorRate == 0 && pair.derNoCollar.errorRate == 0)
        #expect(pair.wordAgreement == 1 && pair.comparedWords == 10)
        #expect(pair.wordMapping == ["x": "Speaker 1", "y": "Speaker 2"])
    }

    /// b keeps Speaker 1 talking until 15 s: 5 of 20 s confused (DER 0.25 without collar; the collar
    /// removes 0.25 s either side of a's boundaries), and the words at 11 and 13 s disagree.
    @Test func aLateSpeakerChangeIsConfusionAndTwoWrongWords() {
        let a = Self.labelling("a", turns: [("Speaker 1", 0, 10), ("Speaker 2", 10, 20)])
        let b = Self.labelling("b", turns: [("x", 0, 15), ("y", 15, 20)])
        let pair = try! #require(LabellingComparison(labellings: [a, b], reference: nil, audioSeconds: 20).pairs.first)
        #expect(abs(pair.derNoCollar.errorRate - 0.25) < 1e-12)
        #expect(abs(pair.derNoCollar.confusionSeconds - 5) < 1e-12)
        // The collar is pyannote's: 0.25 s in all, 0.125 s either side of each of a's boundaries at 0,
        // 10 and 20 s (0.125 + 0.25 + 0.125 = 0.5 s unscored); of the confusion, 10.000-10.125 falls in it.
        #expect(abs(pair.der.referenceSeconds - 19.5) < 1e-9)
        #expect(abs(pair.der.confusionSeconds - 4.875) < 1e-9)
        #expect(pair.sameSpeakerWords == 8 && pair.comparedWords == 10)
        #expect(pair.der.errorRate == DiarizationErrorRate.score(
            reference: LabellingComparison.segments(a), hypothesis: LabellingComparison.segments(b),
            uem: [TimeSpan(startSeconds: 0, endSeconds: 20)], config: DERConfig(collarSeconds: 0.25)).errorRate)
    }

    /// A word one labelling leaves unlabelled is compared and counts against agreement; three
    /// labellings make three pairs, a reference comes first in each of its pairs.
    @Test func unlabelledWordsCountAndEveryPairIsScored() {
        let a = Self.labelling("a", turns: [("Speaker 1", 0, 10), ("Speaker 2", 10, 20)])
        let b = Self.labelling("b", turns: [("x", 0, 10)])
        let c = Self.labelling("c", turns: [("p", 0, 20)])
        let reference = Self.labelling("reference:truth", turns: [("A", 0, 10), ("B", 10, 20)])
        let comparison = LabellingComparison(labellings: [a, b, c], reference: reference, audioSeconds: 20)
        #expect(comparison.pairs.map { "\($0.reference)|\($0.hypothesis)" }
                == ["reference:truth|a", "reference:truth|b", "reference:truth|c", "a|b", "a|c", "b|c"])
        let ab = comparison.pairs[3]
        #expect(ab.comparedWords == 10 && ab.sameSpeakerWords == 5)
        let ac = comparison.pairs[4]
        #expect(ac.sameSpeakerWords == 5, "one label maps to one speaker only")
    }
}
