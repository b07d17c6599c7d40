import Testing
import SpeakerSyncClient

/// Scoring a labelled transcript against a synthetic meeting's truth (what `demo` and the sessions
/// bench print): words are matched by text and start to the millisecond, labels mapped one-to-one.
struct WordSpeakerAgreementTests {
    @Test func labelledWordsAreMatchedToTheTruthByTextAndStartMillisecond() {
        let truth = [("hello", 1.0, "A"), ("there", 1.5, "A"), ("hello", 3.0, "B"), ("friend", 3.4, "B")]
        let labelled: [(text: String, startSeconds: Double, speaker: String?)] = [
            ("hello", 1.0004, "Speaker 1"),   // the same millisecond
            ("there", 1.5, "Speaker 1"),
            ("hello", 3.0, "Speaker 1"),      // B's word under A's label
            ("friend", 3.4, nil),
            ("stray", 9.0, "Speaker 2"),      // no true word there: left out
        ]
        let agreement = WordSpeakerAgreement(truth: truth.map { ($0.0, $0.1, $0.2) }, labelled: labelled)
        #expect(agreement.wordCount == 4)
        #expect(agreement.unlabelledCount == 1)
        #expect(agreement.mapping == ["Speaker 1": "A"])
        #expect(agreement.correctCount == 2)
    }
}
