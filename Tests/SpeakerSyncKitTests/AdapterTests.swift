import Testing
@testable import SpeakerSyncKit

/// The platform-neutral halves of the adapters (the Apple halves are not compiled here).
@Suite struct AdapterTests {
    struct Result: TimedTranscriptionResult {
        var rangeStartSeconds: Double
        var isFinal: Bool
        var timedWords: [SpokenWord]
    }

    @Test func volatileAndFinalResultsOfOneStretchShareAResultID() {
        let volatile = Result(rangeStartSeconds: 12.3456, isFinal: false, timedWords: [])
        let final = Result(rangeStartSeconds: 12.3456, isFinal: true, timedWords: [])
        #expect(SpeakerSyncSession.resultID(rangeStartSeconds: volatile.rangeStartSeconds)
                == SpeakerSyncSession.resultID(rangeStartSeconds: final.rangeStartSeconds))
        #expect(SpeakerSyncSession.resultID(rangeStartSeconds: 12.3456) == "r12346")
        #expect(SpeakerSyncSession.resultID(rangeStartSeconds: 13) != "r12346")
    }
}
