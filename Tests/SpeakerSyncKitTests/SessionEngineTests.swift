import Foundation
import Logging
import Synchronization
import Testing
@testable import SpeakerSyncKit

/// Sockets that record what the session sends and let the test play the server.
final class FakeSockets: SessionSocketFactory, @unchecked Sendable {
    final class Socket: SessionSocket, @unchecked Sendable {
        let events: @Sendable (SessionSocketEvent) -> Void
        private let lock = NSLock()
        private var _texts: [String] = []
        private var _binaries: [[UInt8]] = []
        private(set) var closedWith: UInt16?
        init(events: @escaping @Sendable (SessionSocketEvent) -> Void) { self.events = events }
        func send(text: String) { lock.withLock { _texts.append(text) } }
        func send(binary: [UInt8]) { lock.withLock { _binaries.append(binary) } }
        var queuedBytes: Int { 0 }
        func close(code: UInt16, reason: String) { lock.withLock { closedWith = code } }
        var texts: [String] { lock.withLock { _texts } }
        var binaries: [[UInt8]] { lock.withLock { _binaries } }
        func json(_ type: String) -> [[String: Any]] {
            texts.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }.filter { $0["type"] as? String == type }
        }
    }

    private let lock = NSLock()
    private var _sockets: [Socket] = []
    var sockets: [Socket] { lock.withLock { _sockets } }

    func connect(url: String, headers: [(String, String)], events: @escaping @Sendable (SessionSocketEvent) -> Void) throws -> any SessionSocket {
        let socket = Socket(events: events)
        lock.withLock { _sockets.append(socket) }
        return socket
    }

    /// Waits (bounded) until the session opened `count` sockets.
    func waitForSocket(_ count: Int) async throws -> Socket {
        for _ in 0..<12_000 {
            if sockets.count >= count { return sockets[count - 1] }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw CancellationError()
    }
}

@Suite struct SessionEngineTests {
    static func session(_ sockets: FakeSockets, reconnect: ReconnectPolicy = ReconnectPolicy(initialDelaySeconds: 0.01, maxDelaySeconds: 0.02)) -> SpeakerSyncSession {
        var config = SpeakerSyncSessionConfig(url: "ws://fake/v1/listen", token: "sst_x", provider: "device", sampleRate: 100,
                                              conversationID: "c-1")
        config.reconnect = reconnect
        // The test plays the server and answers when it gets to it: on a machine busy with other
        // suites that can take longer than a real server's open timeout, which would reconnect.
        config.openTimeoutSeconds = 600
        return SpeakerSyncSession(config: config, sockets: sockets, logger: Logger(label: "kit-test"))
    }

    /// The server's answer to the start, written by the server's own encoder.
    static func sessionMessage(offset: Double, resumed: Bool) -> String {
        ServerMessageEncoder().encode(.session(SessionInfo(
            conversationID: "c-1", provider: "device", sampleRate: 100, encoding: .pcmS16LE, resumed: resumed,
            audioOffsetSeconds: offset, serverVersion: "test")))
    }

    /// The session's outcome, or nil if it has not ended within `seconds` (a test never hangs on it).
    static func outcome(of session: SpeakerSyncSession, within seconds: Double = 60) async -> SessionOutcome? {
        await withTaskGroup(of: SessionOutcome?.self) { group in
            group.addTask { await session.outcome() }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            session.stop() // ends the waiting outcome() task if the timer won
            group.cancelAll()
            return first
        }
    }

    /// Polls (bounded: 60 s, for a machine busy with other suites) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<12_000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test func whatWasGivenBeforeTheSessionGoesOutOnceItStartsAtItsOffset() async throws {
        let sockets = FakeSockets()
        let session = Self.session(sockets)
        session.start()
        session.send(samples: [Float](repeating: 0.5, count: 100)) // 1 s at 100 Hz
        session.send(words: [SpokenWord(text: "hi", startSeconds: 0.2, endSeconds: 0.5)], resultID: "r1", isFinal: true)
        let first = try await sockets.waitForSocket(1)
        first.events(.opened)
        #expect(try await Self.eventually { first.json("start").count == 1 })
        let start = first.json("start").first ?? [:]
        #expect(start["conversation_id"] as? String == "c-1" && start["device_id"] == nil)
        first.events(.text(Self.sessionMessage(offset: 10, resumed: true))) // an existing conversation: audio continues at 10 s
        #expect(try await Self.eventually { first.json("words").count == 1 })
        #expect(first.binaries.map(\.count) == [200])
        let word = ((first.json("words").first?["words"] as? [[String: Any]])?.first)
        #expect((word?["start"] as? Double).map { abs($0 - 10.2) < 1e-9 } == true) // on the conversation timeline
        // The earlier session's own "r1" (its words at 0.2 s) is another result: this one names its start.
        #expect(first.json("words").first?["result_id"] as? String == "@10000/r1")
        session.stop()
    }

    @Test func aDropResendsTheAudioFromTheServersStoredEndAndOnlyUndeliveredResults() async throws {
        let sockets = FakeSockets()
        let session = Self.session(sockets)
        session.start()
        let first = try await sockets.waitForSocket(1)
        first.events(.opened)
        first.events(.text(Self.sessionMessage(offset: 0, resumed: false)))
        #expect(try await Self.eventually { session.isLive })
        session.send(samples: [Float](repeating: 0.1, count: 300)) // 3 s
        session.send(words: [SpokenWord(text: "one", startSeconds: 0.1, endSeconds: 0.4)], resultID: "r1", isFinal: true)
        session.send(words: [SpokenWord(text: "two", startSeconds: 2.1, endSeconds: 2.4)], resultID: "r2", isFinal: true)
        // The server echoes "one" as stored, then the connection dies.
        first.events(.text(#"{"type":"transcript","revision":1,"final":false,"removed":[],"upserted":[{"id":"u1","speaker":"Speaker 1","name":"Speaker 1","start":0.1,"end":0.4,"text":"one","words":[{"text":"one","start":0.1,"end":0.4,"speaker":"Speaker 1","final":true,"stored":true}]}]}"#))
        first.events(.closed(code: nil, reason: "connection reset"))
        let second = try await sockets.waitForSocket(2)
        second.events(.opened)
        second.events(.text(Self.sessionMessage(offset: 1.5, resumed: true))) // the server had stored 1.5 s
        #expect(try await Self.eventually { second.json("words").count == 1 })
        #expect(second.json("words").first?["result_id"] as? String == "r2") // "one" was stored: not sent again
        #expect(second.binaries.reduce(0) { $0 + $1.count } == 150 * 2) // samples 150..<300, 16-bit
        #expect(session.sessionCount == 2)
        session.stop()
    }

    @Test func aRefusalEndsTheSessionWithoutRetrying() async throws {
        let sockets = FakeSockets()
        let session = Self.session(sockets)
        session.start()
        let first = try await sockets.waitForSocket(1)
        first.events(.opened)
        first.events(.text(#"{"type":"error","code":"unknown_provider","message":"no such provider","fatal":true}"#))
        first.events(.closed(code: 1008, reason: "unknown_provider"))
        let outcome = await Self.outcome(of: session)
        #expect(outcome == .refused(ConnectionFailure(closeCode: 1008, errorCode: "unknown_provider", message: "no such provider")))
        try await Task.sleep(for: .milliseconds(100))
        #expect(sockets.sockets.count == 1)
    }

    @Test func finishFinalizesAfterResumingAndEndsOnTheCloseOf1000() async throws {
        let sockets = FakeSockets()
        let session = Self.session(sockets)
        session.start()
        let first = try await sockets.waitForSocket(1)
        first.events(.opened)
        first.events(.text(Self.sessionMessage(offset: 0, resumed: false)))
        session.send(diarized: [FluidSegment(speakerId: "S1", startTimeSeconds: 0, endTimeSeconds: 1)])
        #expect(try await Self.eventually { first.json("segments").count == 1 })
        async let outcome = session.finish(timeoutSeconds: 120) // bounded: ends as .stopped if it never finalizes
        #expect(try await Self.eventually { first.json("finalize").count == 1 })
        first.events(.closed(code: 1006, reason: "lost before the final transcript"))
        let second = try await sockets.waitForSocket(2)
        second.events(.opened)
        second.events(.text(Self.sessionMessage(offset: 0, resumed: true)))
        #expect(try await Self.eventually { second.json("finalize").count == 1 }) // finalize again after the resume
        second.events(.closed(code: 1000, reason: "finalized"))
        #expect(await outcome == .finalized)
    }
}

struct FluidSegment: DiarizedSegment {
    var speakerId: String
    var startTimeSeconds: Float
    var endTimeSeconds: Float
}
