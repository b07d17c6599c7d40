import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WebSocketTransport

/// The client reads the HTTP status (and Retry-After) of an upgrade answered with something other than
/// 101 from the response itself: libwebsockets 4.1.6 words every such failure "HS: ws upgrade response
/// not 101" (401: "HS: ws upgrade unauthorized"), which says neither.
@Suite struct ClientUpgradeRefusalTests {
    /// Records what one client connection reported.
    final class Recorder: WebSocketClientHandler {
        let refusals = Mutex<[UpgradeRefusal]>([])
        let ends = Mutex<[String?]>([])
        let connects = Atomic<Int>(0)
        func connected(_ connection: ConnectionID) { connects.add(1, ordering: .relaxed) }
        func received(_ connection: ConnectionID, message: WebSocketMessage) {}
        func upgradeRefused(_ connection: ConnectionID, _ refusal: UpgradeRefusal) { refusals.withLock { $0.append(refusal) } }
        func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) { ends.withLock { $0.append(reason) } }
    }

    /// Connects once to `port` and waits (bounded) until the connection ended.
    static func attempt(port: Int) async throws -> Recorder {
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }
        let recorder = Recorder()
        _ = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen", handler: recorder)
        _ = try await withTimeout(20, "the connection to end") {
            while recorder.ends.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        return recorder
    }

    @Test(arguments: [
        (404, "Not Found", nil), (401, "Unauthorized", nil), (403, "Forbidden", nil), (400, "Bad Request", nil),
        (429, "Too Many Requests", "7"), (503, "Service Unavailable", "Wed, 21 Oct 2037 07:28:00 GMT"),
    ] as [(Int, String, String?)])
    func theStatusAndRetryAfterOfARefusedUpgradeReachTheHandler(status: Int, reason: String, retryAfter: String?) async throws {
        let listener = try CannedHTTPListener(response: CannedHTTPListener.response(
            status: status, reason: reason, headers: retryAfter.map { [("Retry-After", $0)] } ?? []))
        defer { listener.stop() }
        let recorder = try await Self.attempt(port: listener.port)
        let refusals = recorder.refusals.withLock { $0 }
        #expect(refusals.map(\.status) == [status])
        #expect(refusals.first?.retryAfter == retryAfter)
        #expect(refusals.first?.reason.hasPrefix("HS: ws upgrade") == true, "\(refusals)")
        #expect(recorder.ends.withLock { $0.count } == 1) // disconnected follows, once
        #expect(recorder.connects.load(ordering: .relaxed) == 0)
    }

    /// libwebsockets' own refusal page for a server over its connection limit: HTTP/1.0, HTML, no length.
    @Test func anHTTP10AnswerIsReadToo() async throws {
        let listener = try CannedHTTPListener(response: "HTTP/1.0 429 Too Many Requests\r\ncontent-type: text/html\r\n\r\n<html>busy</html>")
        defer { listener.stop() }
        let recorder = try await Self.attempt(port: listener.port)
        #expect(recorder.refusals.withLock { $0.map(\.status) } == [429])
    }

    /// No answer at all (nothing listens): no status, only the transport's reason.
    @Test func aConnectionThatNeverGotAnAnswerHasNoStatus() async throws {
        let recorder = try await Self.attempt(port: try ServerProcess.freePort())
        #expect(recorder.refusals.withLock { $0.isEmpty })
        #expect(recorder.ends.withLock { $0.count } == 1)
    }
}
