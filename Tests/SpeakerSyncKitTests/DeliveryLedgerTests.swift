import Testing
@testable import SpeakerSyncKit

@Suite struct DeliveryLedgerTests {
    @Test func aResultIsDeliveredWhenFinalAndEveryWordCameBackStored() {
        var ledger = DeliveryLedger()
        let words = [SpokenWord(text: "hello", startSeconds: 1, endSeconds: 1.4), SpokenWord(text: "there", startSeconds: 1.5, endSeconds: 1.9)]
        ledger.record(resultID: "r1", words: Array(words.prefix(1)), isFinal: false)
        ledger.confirm(text: "hello", startSeconds: 1)
        #expect(ledger.undelivered.map(\.resultID) == ["r1"]) // volatile: the final version is still to come
        ledger.record(resultID: "r1", words: words, isFinal: true)
        #expect(ledger.undelivered.first?.words.count == 2) // the latest version replaces the first
        ledger.confirm(text: "there", startSeconds: 1.5004) // times match to the millisecond
        #expect(ledger.undelivered.isEmpty)
        #expect(ledger.compact() == 1)
        #expect(ledger.resultCount == 0)
    }

    @Test func undeliveredResultsKeepTheirOrder() {
        var ledger = DeliveryLedger()
        for index in 0..<5 {
            ledger.record(resultID: "r\(index)", words: [SpokenWord(text: "w\(index)", startSeconds: Double(index), endSeconds: Double(index) + 0.3)], isFinal: true)
        }
        ledger.confirm(text: "w1", startSeconds: 1)
        ledger.confirm(text: "w3", startSeconds: 3)
        #expect(ledger.undelivered.map(\.resultID) == ["r0", "r2", "r4"])
    }

    @Test func segmentsAfterTheResumePointAreResent() {
        var ledger = DeliveryLedger()
        ledger.record([SpeakerSyncSegment(speaker: "A", startSeconds: 0, endSeconds: 4), SpeakerSyncSegment(speaker: "B", startSeconds: 4, endSeconds: 9)])
        #expect(ledger.segments(endingAfter: 5).map(\.speaker) == ["B"])
        #expect(ledger.segments(endingAfter: 0).count == 2)
    }

    /// A word not yet stored keeps the segment that labels it in the resend, even when the segment ended
    /// before the resume point; once the word is stored, only the segments after the resume point go.
    @Test func aSegmentLabellingAWordNotYetStoredIsResentThoughItEndedBeforeTheResumePoint() {
        var ledger = DeliveryLedger()
        ledger.record([SpeakerSyncSegment(speaker: "A", startSeconds: 0, endSeconds: 4), SpeakerSyncSegment(speaker: "B", startSeconds: 4, endSeconds: 9),
                       SpeakerSyncSegment(speaker: "A", startSeconds: 9, endSeconds: 12)])
        ledger.record(resultID: "r1", words: [SpokenWord(text: "early", startSeconds: 1, endSeconds: 1.5)], isFinal: true)
        ledger.record(resultID: "r2", words: [SpokenWord(text: "later", startSeconds: 5, endSeconds: 5.5)], isFinal: true)
        ledger.confirm(text: "early", startSeconds: 1)
        // The server's audio reaches 10 s, but "later" (5 s) was never stored: B's segment goes again.
        #expect(ledger.segmentsToResend(resumingAt: 10).map(\.speaker) == ["B", "A"])
        ledger.confirm(text: "later", startSeconds: 5)
        #expect(ledger.segmentsToResend(resumingAt: 10).map(\.speaker) == ["A"])
        // Nothing unconfirmed: the resume point alone decides.
        #expect(ledger.segmentsToResend(resumingAt: 3).count == 3)
    }
}
