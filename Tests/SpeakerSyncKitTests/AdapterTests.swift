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

    /// `send(result:)`, the path SpeechTranscriber's results take: one `words` message per result,
    /// under the stretch's id, volatile then final.
    @Test func aTranscriberResultIsOneWordsMessageUnderItsStretchsID() async throws {
        let sockets = FakeSockets()
        let session = SessionEngineTests.session(sockets)
        session.start()
        let socket = try await sockets.waitForSocket(1)
        socket.events(.opened)
        socket.events(.text(SessionEngineTests.sessionMessage(offset: 0, resumed: false)))
        let word = SpokenWord(text: "hello", startSeconds: 2.5, endSeconds: 2.75)
        session.send(result: Result(rangeStartSeconds: 2.5, isFinal: false, timedWords: [word]))
        session.send(result: Result(rangeStartSeconds: 2.5, isFinal: true, timedWords: [word]))
        #expect(try await SessionEngineTests.eventually { socket.json("words").count == 2 })
        #expect(socket.json("words").map { $0["result_id"] as? String } == ["r2500", "r2500"])
        #expect(socket.json("words").map { $0["final"] as? Bool } == [false, true])
        session.stop()
    }
}
