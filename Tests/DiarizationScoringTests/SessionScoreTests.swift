import DiarizationScoring
import Testing

/// The figures one streamed session scores (`speakersync eval` and the console's test recordings alike).
@Suite struct SessionScoreTests {
    let reference = [
        SpeakerSegment(speaker: "A", startSeconds: 0, endSeconds: 4),
        SpeakerSegment(speaker: "B", startSeconds: 3, endSeconds: 8),
    ]
    let uem = [TimeSpan(startSeconds: 0, endSeconds: 8)]
    let spans = [(text: "one", startSeconds: 0.5, endSeconds: 1.0), (text: "two", startSeconds: 3.2, endSeconds: 3.6),
                 (text: "three", startSeconds: 6.0, endSeconds: 6.5)]

    @Test func knownSpeakersReplaceTheReferenceTurnsButKeepTheOverlapFlags() {
        // "two" (3.2–3.6 s) lies as much in A's turn as in B's: the turns alone give it A, the truth B.
        #expect(ReferenceWordLabels.label(spans, reference: reference).map(\.speaker) == ["A", "A", "B"])
        let labelled = ReferenceWordLabels.label(spans, reference: reference, trueSpeakers: ["A", "B", "B"])
        #expect(labelled.map(\.speaker) == ["A", "B", "B"])
        #expect(labelled.map(\.isOverlapped) == [false, true, false])
    }

    @Test func aPerfectSessionScoresZeroWhateverItsLabelsAreCalledAndInAnyWordOrder() {
        let referenceWords = ReferenceWordLabels.label(spans, reference: reference, trueSpeakers: ["A", "B", "B"])
        let turns = [SpeakerSegment(speaker: "Speaker 2", startSeconds: 0, endSeconds: 4),
                     SpeakerSegment(speaker: "Speaker 1", startSeconds: 3, endSeconds: 8)]
        let hypothesis = zip(spans, ["Speaker 2", "Speaker 1", "Speaker 1"]).reversed().map {
            ScoredWord(text: $0.0.text, startSeconds: $0.0.startSeconds, endSeconds: $0.0.endSeconds, speaker: $0.1)
        }
        let score = SessionScore(reference: reference, uem: uem, referenceWords: referenceWords, hypothesisWords: hypothesis,
                                 liveTurns: turns, finalTurns: turns)
        #expect(score.finalDER.errorRate == 0 && score.finalDERCollar.errorRate == 0 && score.liveDERCollar.errorRate == 0)
        #expect(score.jer == 0 && score.wder.errorRate == 0 && score.wder.alignedWordCount == 3)
        // "two" lies in the overlap (3–4 s): counted apart, and its speaker (B) is one of the two talking.
        #expect(score.overlapWordCount == 1 && score.overlapWordsWithATalkingSpeaker == 1)
        #expect(score.wderOutsideOverlap.alignedWordCount == 2)
        #expect(score.speakers.difference == 0 && score.wordCount == 3 && score.unlabelledWordCount == 0)
    }

    @Test func liveMistakesAndUnlabelledWordsCountApartFromFinalOnes() {
        let referenceWords = ReferenceWordLabels.label(spans, reference: reference, trueSpeakers: ["A", "B", "B"])
        let final = [SpeakerSegment(speaker: "x", startSeconds: 0, endSeconds: 4), SpeakerSegment(speaker: "y", startSeconds: 3, endSeconds: 8)]
        let live = [SpeakerSegment(speaker: "x", startSeconds: 0, endSeconds: 8)]
        let hypothesis = [ScoredWord(text: "one", startSeconds: 0.5, endSeconds: 1.0, speaker: "x"),
                          ScoredWord(text: "two", startSeconds: 3.2, endSeconds: 3.6, speaker: "y"),
                          ScoredWord(text: "three", startSeconds: 6.0, endSeconds: 6.5, speaker: nil)]
        let score = SessionScore(reference: reference, uem: uem, referenceWords: referenceWords, hypothesisWords: hypothesis,
                                 liveTurns: live, finalTurns: final)
        #expect(score.finalDER.errorRate == 0)
        #expect(score.liveDERCollar.errorRate > 0)
        #expect(score.unlabelledWordCount == 1 && score.wder.mislabelledWordCount == 1)
        #expect(score.speakers.hypothesisCount == 2)
    }
}
