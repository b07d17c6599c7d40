import Foundation
import Testing
import TestSupport
@testable import WebSocketTransport

/// A refused upgrade is answered like an HTTP API error: `HTTP/1.1 <status> <reason>`, JSON
/// `{"error":{"code","message"}}`, a `Content-Length`, `Retry-After` when the refusal gives one, and
/// the connection closed. (lws's own refusal page is HTML, HTTP/1.0, and has neither.)
@Suite("Refused upgrades are JSON with Retry-After")
struct UpgradeRefusalResponseTests {
    struct Answer {
        var statusLine: String
        var headers: [String: String]
        var body: [UInt8]
        var closedAfter: Bool

        var error: [String: String]? {
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            return (object?["error"] as? [String: Any])?.compactMapValues { $0 as? String }
        }
    }

    /// Sends an upgrade request to `path` and reads the whole answer, then whether the server closed.
    static func upgrade(port: Int, path: String = "/v1/listen") async throws -> Answer {
        try await Blocking.run { try upgradeAnswer(port: port, path: path) }
    }

    /// `upgrade`, on the calling thread.
    static func upgradeAnswer(port: Int, path: String = "/v1/listen") throws -> Answer {
        let connection = try RawConnection(port: port, timeoutSeconds: 20)
        try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let head = try connection.readHead()
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        var headers: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let body = try connection.read(count: Int(headers["content-length"] ?? "0") ?? 0)
        return Answer(statusLine: statusLine, headers: headers, body: body, closedAfter: connection.waitUntilClosed())
    }

    @Test func aWrongPathIsA404WithTheNotFoundCode() async throws {
        let (server, port) = try startServer(ScriptedHandler())
        defer { server.shutdown() }
        let answer = try await Self.upgrade(port: port, path: "/v1/elsewhere")
        #expect(answer.statusLine == "HTTP/1.1 404 Not Found")
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.headers["retry-after"] == nil)
        #expect(answer.error?["code"] == "not_found")
        #expect(answer.error?["message"]?.contains("/v1/listen") == true)
        #expect(answer.closedAfter)
    }

    @Test(arguments: [
        (401, "Unauthorized", "unauthorized", nil), (403, "Forbidden", "device_mismatch", nil),
        (429, "Too Many Requests", "rate_limited", 7), (503, "Service Unavailable", "server_stopping", 5),
    ] as [(Int, String, String, Int?)])
    func theHandlersRefusalIsAnsweredAsJSON(status: Int, reason: String, code: String, retryAfter: Int?) async throws {
        let message = "refused with \"quotes\" and a \\ backslash"
        let handler = ScriptedHandler(onAdmit: { _ in .refuse(status: status, code: code, message: message, retryAfterSeconds: retryAfter) })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let answer = try await Self.upgrade(port: port)
        #expect(answer.statusLine == "HTTP/1.1 \(status) \(reason)")
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.headers["connection"] == "close")
        #expect(answer.headers["retry-after"] == retryAfter.map(String.init))
        #expect(answer.error == ["code": code, "message": message])
        #expect(answer.closedAfter)
        #expect(handler.log.withLock { $0.opened.isEmpty })
    }

    @Test func aServerAtItsConnectionLimitAnswers503ServerBusyWithRetryAfter() async throws {
        var config = WebSocketServerConfig.default
        config.maxConnections = 1
        let (server, port) = try startServer(ScriptedHandler(), config: config)
        defer { server.shutdown() }
        // Held and asked back to back on one thread: with a hop through the cooperative pool in
        // between, a loaded 2-core CI machine once stalled this test for minutes (420 s), the held
        // socket was gone by then (likely as one that answers no pings), and the second upgrade was let in.
        let answer = try await Blocking.run {
            let held = try RawWebSocket(port: port)
            return try withExtendedLifetime(held) { try Self.upgradeAnswer(port: port) }
        }
        #expect(answer.statusLine == "HTTP/1.1 503 Service Unavailable")
        #expect(answer.error?["code"] == "server_busy")
        #expect(answer.headers["retry-after"] == "5")
    }

    /// The transport's own client reads the status and Retry-After of such an answer.
    @Test func theClientReadsTheStatusAndRetryAfter() async throws {
        let handler = ScriptedHandler(onAdmit: { _ in .refuse(status: 429, code: "rate_limited", message: "slow down", retryAfterSeconds: 3) })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let recorder = try await ClientUpgradeRefusalTests.attempt(port: port)
        #expect(recorder.refusals.withLock { $0 } .map(\.status) == [429])
        #expect(recorder.refusals.withLock { $0 }.first?.retryAfter == "3")
    }
}
