import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// Slowloris on the body: lws restarts its body timeout on every byte, so clients trickling request
/// bodies a byte per second could hold every connection the server allows for as long as they like.
/// The transport judges each body's pace; the tricklers get 408 and lose their connections, and
/// another device's requests get through.
@Suite(.serialized) struct SlowBodyEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// What one trickling client saw: the status it was answered with (if it read one) and whether
    /// the server ended its connection before the body was complete.
    struct Trickle: Sendable {
        var status: Int?
        var endedEarly: Bool
    }

    /// Sends the headers of a 600-byte POST, then one body byte per second (the read timeout paces
    /// it) until the server answers or ends the connection, at most 90 bytes (so for longer than the
    /// other device below waits).
    static func trickle(port: Int, token: String) throws -> Trickle {
        let connection = try RawConnection(port: port, timeoutSeconds: 1)
        try connection.send("POST /v1/people?device_id=trickler&name=Slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                            + "Content-Type: audio/wav\r\nContent-Length: 600\r\n\r\n")
        var received: [UInt8] = []
        for _ in 0..<90 {
            guard (try? connection.send(bytes: [0x52])) != nil else { break }
            switch connection.receive() {
            case .success(let bytes): received += bytes
            case .failure(let stop) where stop.end == .timedOut: continue
            case .failure: return Trickle(status: status(of: received), endedEarly: true)
            }
        }
        return Trickle(status: status(of: received), endedEarly: status(of: received) != nil)
    }

    static func status(of bytes: [UInt8]) -> Int? {
        let line = String(decoding: bytes.prefix(32), as: UTF8.self)
        guard line.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(line.dropFirst(9).prefix(3))
    }

    @Test func twelveClientsTricklingBodiesLoseTheirConnectionsAndAnotherDevicesRequestsSucceed() async throws {
        let server = try TestServer {
            $0.maxConnections = 12
            $0.minimumBodyBytesPerSecond = 50
            $0.bodyRateWindowSeconds = 2
        }
        let token = try SecurityEndToEndTests.token(server, device: "phone-patient")
        let port = server.port, adminKey = server.adminKey
        let url = server.http + "/v1/conversations"

        async let trickles = withThrowingTaskGroup(of: Trickle.self) { group in
            for _ in 0..<12 { group.addTask { try await Blocking.run { try Self.trickle(port: port, token: adminKey) } } }
            return try await group.reduce(into: [Trickle]()) { $0.append($1) }
        }
        // The other device asks until it is answered (503 server_busy while the tricklers hold every
        // connection); bounded, so without the pace check it would never be.
        let answered = try await Blocking.run {
            Polling.until(seconds: 45) { (try? SimpleHTTPClient.get(url, token: token, timeoutSeconds: 5).status) == 200 }
        }
        #expect(answered)
        let results = try await trickles
        let statuses = results.map(\.status)
        let allEndedEarly = results.allSatisfy { $0.endedEarly }
        let onlyTimeouts = statuses.allSatisfy { $0 == nil || $0 == 408 }
        #expect(results.count == 12)
        #expect(allEndedEarly, "\(statuses)")
        #expect(statuses.contains(408), "\(statuses)")
        #expect(onlyTimeouts, "\(statuses)")
    }

    /// Sends the headers of a 600-byte POST and one byte of its body, and keeps the connection: a
    /// request in flight that the server holds for as long as its pace rules allow.
    static func heldRequest(port: Int, token: String) throws -> RawConnection {
        let connection = try RawConnection(port: port, timeoutSeconds: 2)
        try connection.send("POST /v1/people?device_id=holder&name=Held HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                            + "Content-Type: audio/wav\r\nContent-Length: 600\r\n\r\nR")
        return connection
    }

    @Test func oneCredentialHoldsAtMostItsRequestsInFlightAndAnotherIsNotAffected() async throws {
        let server = try TestServer {
            $0.maxRequestsInFlightPerCredential = 4
            $0.minimumBodyBytesPerSecond = 0 // held bodies stay held: the share alone must stop the fifth
        }
        let holder = try SecurityEndToEndTests.token(server, device: "phone-holder")
        let other = try SecurityEndToEndTests.token(server, device: "phone-other")
        let url = server.http + "/v1/conversations"
        var held = try (0..<4).map { _ in try Self.heldRequest(port: server.port, token: holder) }
        // Once the server has the four, the holder's next request is refused at once, before any body.
        let refused = try await Blocking.run {
            Polling.until(seconds: 20) {
                guard let response = try? SimpleHTTPClient.get(url, token: holder, timeoutSeconds: 5) else { return false }
                return response.status == 429 && SecurityEndToEndTests.code(response) == "too_many_requests_in_flight"
                    && response.headers["retry-after"] != nil
            }
        }
        #expect(refused)
        // Another device's requests and session are not held back.
        #expect(try SimpleHTTPClient.get(url, token: other, timeoutSeconds: 5).status == 200)
        // The held requests gone, the holder gets in again.
        held.removeAll()
        let back = try await Blocking.run {
            Polling.until(seconds: 20) { (try? SimpleHTTPClient.get(url, token: holder, timeoutSeconds: 5).status) == 200 }
        }
        #expect(back)
    }

    @Test func oneAddressHoldsAtMostItsConnections() async throws {
        let server = try TestServer {
            $0.maxConnectionsPerAddress = 3
            $0.minimumBodyBytesPerSecond = 0
        }
        let url = server.http + "/v1/conversations", adminKey = server.adminKey
        var held = try (0..<3).map { _ in try Self.heldRequest(port: server.port, token: adminKey) }
        let refused = try await Blocking.run {
            Polling.until(seconds: 20) {
                guard let response = try? SimpleHTTPClient.get(url, token: adminKey, timeoutSeconds: 5) else { return false }
                return response.status == 429 && SecurityEndToEndTests.code(response) == "too_many_connections"
            }
        }
        #expect(refused)
        held.removeAll()
        let back = try await Blocking.run {
            Polling.until(seconds: 20) { (try? SimpleHTTPClient.get(url, token: adminKey, timeoutSeconds: 5).status) == 200 }
        }
        #expect(back)
    }
}
