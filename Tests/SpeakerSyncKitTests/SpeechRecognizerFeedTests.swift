import Logging
import Testing
@testable import SpeakerSyncKit

/// The feed on a session with fake sockets: what an SFSpeechRecognizer task's results become on the wire.
@Suite struct SpeechRecognizerFeedTests {
    @Test func eachRevisionIsOneWordsMessageAndARestartedTaskStartsWhereTheAudioHadGot() async throws {
        let sockets = FakeSockets()
        let session = SessionEngineTests.session(sockets) // 100 Hz
        session.start()
        let socket = try await sockets.waitForSocket(1)
        socket.events(.opened)
        socket.events(.text(SessionEngineTests.sessionMessage(offset: 100, resumed: true))) // the conversation's audio is at 100 s
        #expect(try await SessionEngineTests.eventually { session.isLive })

        let first = session.speechRecognizerFeed()
        #expect(first.taskStartSeconds == 0)
        session.send(samples: [Float](repeating: 0, count: 250)) // 2.5 s
        first.send(SpeechRecognizerResult(segments: [SpeechRecognizerSegment(substring: "one", timestamp: 0.5, duration: 0.25, confidence: 0)], isFinal: false))
        first.send(SpeechRecognizerResult(segments: [SpeechRecognizerSegment(substring: "one", timestamp: 0.5, duration: 0.25, confidence: 0)], isFinal: false))
        first.send(SpeechRecognizerResult(segments: [SpeechRecognizerSegment(substring: "One", timestamp: 0.5, duration: 0.25, confidence: 0.75)], isFinal: true))
        let second = session.speechRecognizerFeed() // the restart: its times count from 2.5 s
        #expect(second.taskStartSeconds == 2.5)
        second.send(SpeechRecognizerResult(segments: [SpeechRecognizerSegment(substring: "two", timestamp: 0.25, duration: 0.5, confidence: 0)], isFinal: false))
        second.finish() // cancelled before its final result

        #expect(try await SessionEngineTests.eventually { socket.json("words").count == 4 })
        let messages = socket.json("words")
        // Qualified with where this session starts on the resumed conversation (100 s), so they cannot
        // name an earlier session's results (`SpeakerSyncSession.wireResultID`).
        #expect(messages.map { $0["result_id"] as? String } == ["@100000/sf0-0", "@100000/sf0-0", "@100000/sf2500-0", "@100000/sf2500-0"])
        #expect(messages.map { $0["final"] as? Bool } == [false, true, false, true])
        let words = messages.map { ($0["words"] as? [[String: Any]])?.first ?? [:] }
        #expect(words.map { $0["start"] as? Double } == [100.5, 100.5, 102.75, 102.75]) // on the conversation's timeline
        #expect(words[1]["confidence"] as? Double == 0.75 && words[0]["confidence"] == nil)
        session.stop()
    }
}
