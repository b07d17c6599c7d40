import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// A burst of upgrades with `--auth off` (everyone is the one open "credential"): the rate limit
/// counts per client address, and the upgrades beyond the burst get the HTTP API's JSON 429 with
/// Retry-After, never lws's HTML page.
@Suite(.serialized) struct UpgradeBurstEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// What the server answered one upgrade request.
    struct Answer {
        var status: Int
        var statusLine: String
        var headers: [String: String]
        var body: [UInt8]

        var errorCode: String? {
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            return (object?["error"] as? [String: Any])?["code"] as? String
        }
    }

    static func request(port: Int) -> String {
        "GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    /// Reads the answer's head, and its body when it is not a 101.
    static func answer(_ connection: RawConnection) throws -> Answer {
        let head = try connection.readHead()
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let body = status == 101 ? [] : try connection.read(count: Int(headers["content-length"] ?? "0") ?? 0)
        return Answer(status: status, statusLine: statusLine, headers: headers, body: body)
    }

    @Test func threeHundredUpgradesFromOneAddressGetJSON429sBeyondTheBurstAndAnotherAddressHasItsOwnBucket() async throws {
        let burst = 60
        let server = try TestServer {
            $0.access.mode = .off
            // A token every 100 s: within the test, the burst is all an address gets.
            $0.access.requestsPerSecond = 0.01
            $0.access.requestBurst = Double(burst)
        }
        let port = server.port
        let (answers, other, first) = try await Blocking.run {
            // Every request is written before any answer is read: 300 upgrades at once. The accepted
            // connections stay open until the end.
            let connections = try (0..<300).map { _ in try RawConnection(port: port, timeoutSeconds: 30) }
            for connection in connections { try connection.send(Self.request(port: port)) }
            let answers = try connections.map(Self.answer)
            // A second client address (127.0.0.2 on the same loopback) has a bucket of its own, and the
            // first address's stays empty.
            let other = try RawConnection(port: port, timeoutSeconds: 30, sourceAddress: "127.0.0.2")
            try other.send(Self.request(port: port))
            let again = try RawConnection(port: port, timeoutSeconds: 30)
            try again.send(Self.request(port: port))
            let result = (answers, try Self.answer(other), try Self.answer(again))
            withExtendedLifetime(connections) {}
            return result
        }
        let accepted = answers.filter { $0.status == 101 }
        let refused = answers.filter { $0.status != 101 }
        #expect(accepted.count == burst)
        #expect(refused.count == 300 - burst)
        for answer in refused {
            #expect(answer.statusLine == "HTTP/1.1 429 Too Many Requests", "\(answer.statusLine)")
            #expect(answer.headers["content-type"] == "application/json")
            #expect(answer.errorCode == "rate_limited")
            #expect((answer.headers["retry-after"].flatMap(Int.init) ?? 0) >= 1, "\(answer.headers)")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("<html"))
        }

        #expect(other.status == 101, "\(other.statusLine)")
        #expect(first.status == 429, "\(first.statusLine)")
    }
}
