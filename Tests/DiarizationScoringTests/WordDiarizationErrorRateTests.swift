import DiarizationScoring
import Testing

/// Words one second apart; times do not matter to WDER.
func words(_ text: String, _ speakers: [String?], overlapped: Set<Int> = []) -> [ScoredWord] {
    text.split(separator: " ").enumerated().map { index, word in
        ScoredWord(
            text: String(word), startSeconds: Double(index), endSeconds: Double(index) + 0.5,
            speaker: speakers[index], isOverlapped: overlapped.contains(index))
    }
}

@Suite struct WordDiarizationErrorRateTests {
    let reference = words("hello world how are you", ["A", "A", "A", "B", "B"], overlapped: [2])

    @Test func substitutionsStayAlignedInsertionsDoNot() {
        // "now" substitutes "how" (still aligned), "today" is inserted, "Hello," matches "hello".
        let hypothesis = words("Hello, world now are you today", ["1", "1", "2", "2", "2", "2"])
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: hypothesis)
        #expect(result.alignedWordCount == 5)
        #expect(result.mapping == ["1": "A", "2": "B"])
        #expect(result.mislabelledWordCount == 1)
        #expect(result.errorRate == 0.2)
        #expect(result.substitutedWordCount == 1 && result.insertedWordCount == 1 && result.deletedWordCount == 0)
        #expect(result.hypothesisWordCount == 6)
        #expect(result.overlappedAlignedWordCount == 1 && result.overlappedMislabelledWordCount == 1)
    }

    @Test func deletionsAreNotScored() {
        let hypothesis = words("hello world are you", ["x", "x", "y", "y"])
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: hypothesis)
        #expect(result.alignedWordCount == 4)
        #expect(result.deletedWordCount == 1)
        #expect(result.mislabelledWordCount == 0)
        #expect(result.errorRate == 0)
    }

    @Test func unlabelledWordsAreMislabelled() {
        let hypothesis = words("hello world how are you", ["1", nil, "1", "2", nil])
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: hypothesis)
        #expect(result.unlabelledWordCount == 2)
        #expect(result.mislabelledWordCount == 2)
        #expect(result.errorRate == 0.4)
    }

    @Test func oneHypothesisSpeakerForTwoReferenceSpeakersMapsToTheLarger() {
        let hypothesis = words("hello world how are you", ["1", "1", "1", "1", "1"])
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: hypothesis)
        #expect(result.mapping == ["1": "A"])
        #expect(result.mislabelledWordCount == 2)
    }

    @Test func referenceWordsWithoutSpeakerAreLeftOut() {
        let reference = words("a b c", ["A", nil, "A"])
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: words("a b c", ["1", "2", "1"]))
        #expect(result.alignedWordCount == 2 && result.unscoredWordCount == 1 && result.errorRate == 0)
        #expect(WordDiarizationErrorRate.score(reference: [], hypothesis: []).errorRate == 0)
    }

    @Test func alignmentOfALongMeetingKeepsEveryWordInPlace() {
        // 3000 words, every 10th replaced and every 7th dropped from the hypothesis: the alignment must
        // still pair every surviving word with its own reference word (texts are unique).
        let count = 3000
        let reference = (0..<count).map { ScoredWord(text: "w\($0)", startSeconds: 0, endSeconds: 0, speaker: $0 % 300 < 150 ? "A" : "B") }
        var hypothesis: [ScoredWord] = []
        for (index, word) in reference.enumerated() where !index.isMultiple(of: 7) {
            let text = index.isMultiple(of: 10) ? "other" : word.text
            hypothesis.append(ScoredWord(text: text, startSeconds: 0, endSeconds: 0, speaker: word.speaker == "A" ? "s1" : "s2"))
        }
        let result = WordDiarizationErrorRate.score(reference: reference, hypothesis: hypothesis)
        #expect(result.alignedWordCount == hypothesis.count)
        #expect(result.deletedWordCount == count - hypothesis.count)
        #expect(result.mislabelledWordCount == 0)
    }
}

@Suite struct ReferenceWordLabelsTests {
    let reference = [turn("A", 0, 5), turn("B", 4, 8), turn("A", 10, 12)]

    @Test func midpointDecidesAndOverlapPicksTheLongerCover() {
        let labelled = ReferenceWordLabels.label(
            [("one", 1, 2), ("two", 3.5, 4.7), ("three", 6, 7), ("four", 4.1, 5.7)], reference: reference)
        #expect(labelled.map(\.speaker) == ["A", "A", "B", "B"])
        #expect(labelled.map(\.isOverlapped) == [false, true, false, true])
        #expect(labelled[1].text == "two" && labelled[1].startSeconds == 3.5)
    }

    @Test func wordsOutsideTurnsTakeTheNearestWithinTolerance() {
        let labelled = ReferenceWordLabels.label(
            [("near", 8.1, 8.3), ("far", 9.0, 9.2), ("before", 9.6, 9.9)], reference: reference, toleranceSeconds: 0.25)
        #expect(labelled.map(\.speaker) == ["B", nil, "A"])
        #expect(labelled.allSatisfy { !$0.isOverlapped })
    }
}

@Suite struct SpeakerCountErrorTests {
    @Test func countsSpeakersWithSpeechInsideTheUEM() {
        let reference = [turn("A", 0, 5), turn("B", 5, 9), turn("C", 20, 25)]
        let hypothesis = [turn("1", 0, 9), turn("2", 3, 4), turn("3", 4, 6), turn("4", 22, 23), turn("5", 1, 1)]
        let all = SpeakerCountError(reference: reference, hypothesis: hypothesis)
        #expect(all.referenceCount == 3 && all.hypothesisCount == 4 && all.difference == 1)
        let cropped = SpeakerCountError(reference: reference, hypothesis: hypothesis, uem: [span(0, 10)])
        #expect(cropped.referenceCount == 2 && cropped.hypothesisCount == 3 && cropped.difference == 1)
    }
}

@Suite struct ScoreReportTests {
    @Test func scoresEveryReferenceFileAndNamesMismatchedFiles() {
        let report = ScoreReport(
            reference: ["b": [turn("A", 0, 10)], "a": [turn("A", 0, 10), turn("B", 10, 20)]],
            hypothesis: ["a": [turn("x", 0, 10), turn("y", 10, 20)], "zz": [turn("q", 0, 1)]],
            uem: ["a": [span(0, 20)]])
        #expect(report.files.map(\.fileID) == ["a", "b"])
        #expect(report.files[0].diarizationError.errorRate == 0)
        #expect(report.files[1].diarizationError.errorRate == 1)
        #expect(close(report.total.errorRate, 10.0 / 30))
        #expect(close(report.jaccardErrorRate, 1.0 / 3))
        #expect(report.filesWithoutHypothesis == ["b"])
        #expect(report.unknownHypothesisFiles == ["zz"])
    }
}
