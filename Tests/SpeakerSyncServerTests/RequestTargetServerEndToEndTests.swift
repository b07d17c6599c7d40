import Foundation
import PostgresClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// The requests schemathesis found, byte for byte over a raw socket to a real server: libwebsockets
/// 4.1.6 decodes the target as it reads it and a CR or LF (raw or encoded) ends its request line, so
/// each was served as another, shorter request. Now they are refused with 400 `invalid_text` and act
/// on nothing; paths are decoded once (by lws), so `%25` is a literal `%` in an id.
@Suite(.serialized) struct RequestTargetServerEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer
    typealias Answer = UpgradeBurstEndToEndTests.Answer

    static func send(_ server: TestServer, _ method: String, _ target: String, upgrade: Bool = false) throws -> Answer {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAuthorization: Bearer \(server.adminKey)\r\n"
        if upgrade {
            head += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        } else if method == "POST" {
            head += "Content-Length: 0\r\n"
        }
        let connection = try RawConnection(port: server.port, timeoutSeconds: 30)
        try connection.send(head + "\r\n")
        return try UpgradeBurstEndToEndTests.answer(connection)
    }

    static func tokenCount(_ server: TestServer, device: String) throws -> Int {
        let (status, body) = try server.json("/v1/devices/\(device)/tokens")
        #expect(status == 200)
        return (body["tokens"] as? [Any])?.count ?? -1
    }

    @Test func aCROrLFInThePathOrQueryIsRefusedInsteadOfServingWhatLwsKeptOfIt() throws {
        let server = try TestServer()
        for (method, target) in [("GET", "/v1/conversations/%0Dxyz"), ("GET", "/v1/conversations/a%0Ab/labellings"),
                                 ("GET", "/v1/people?device_id=a%0Db"), ("GET", "/v1/conversations/%00"),
                                 ("GET", "/v1/conversations?limit=1%0A"), ("GET", "/v1/conversations/a;b")] {
            let answer = try Self.send(server, method, target)
            #expect(answer.status == 400, "\(method) \(target): \(answer.statusLine)")
            #expect(answer.errorCode == "invalid_text", "\(method) \(target)")
            #expect(answer.headers["content-type"] == "application/json")
        }
    }

    /// The cut-short requests that would have changed something change nothing.
    @Test func aDeleteOrATokenWhoseTargetLwsWouldCutShortChangesNothing() throws {
        let server = try TestServer()
        let id = "target-\(UInt32.random(in: 0...UInt32.max))"
        try PGConnection(connectionString: server.connectionString).execute("""
            INSERT INTO conversations (id, device_id, provider, sample_rate, encoding, status)
            VALUES ($1, 'phone', 'device', 16000, 'pcm_s16le', 'finalized')
            """, [id])
        let delete = try Self.send(server, "DELETE", "/v1/conversations/\(id)%0A/x")
        #expect(delete.status == 400 && delete.errorCode == "invalid_text", "\(delete.statusLine)")
        #expect(try server.json("/v1/conversations/\(id)").status == 200)

        let token = try Self.send(server, "POST", "/v1/devices/q/tokens?label=ab%0Acd")
        #expect(token.status == 400 && token.errorCode == "invalid_text", "\(token.statusLine)")
        #expect(try Self.tokenCount(server, device: "q") == 0)
    }

    /// A NUL where lws 4.1.6 is not right after a `/` (every one in the query) fails its parse: it
    /// closes the socket before any callback, so no answer can be written, but nothing is served.
    @Test func aNULWhereLwsFailsItsParseGetsNoAnswerAndChangesNothing() throws {
        let server = try TestServer()
        for (method, target) in [("GET", "/v1/conversations/a%00b"), ("GET", "/v1/people?device_id=a%00b"),
                                 ("POST", "/v1/devices/0/tokens?label=&%00=null")] {
            let answer = try Self.send(server, method, target)
            #expect(answer.status == 0 && answer.statusLine.isEmpty, "\(method) \(target): \(answer.statusLine)")
        }
        #expect(try Self.tokenCount(server, device: "0") == 0)
    }

    @Test func aPathIsDecodedOnceSoPercent25StaysAPercentInTheID() throws {
        let server = try TestServer()
        let answer = try Self.send(server, "GET", "/v1/conversations/a%2541")
        #expect(answer.status == 404)
        let message = ((try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
        #expect(message == "no conversation with id 'a%41'", "\(message ?? "")")
    }

    @Test func anUpgradeWhoseQueryLwsWouldCutShortIsRefusedWith400() throws {
        let server = try TestServer()
        for target in ["/v1/listen?device_id=a%0Ab&provider=device&sample_rate=16000&encoding=pcm_s16le",
                       "/v1/listen?device_id=a\rb&provider=device", "/v1/listen/%00"] {
            let answer = try Self.send(server, "GET", target, upgrade: true)
            #expect(answer.statusLine == "HTTP/1.1 400 Bad Request", "\(target.debugDescription)")
            #expect(answer.errorCode == "invalid_text", "\(target.debugDescription)")
        }
    }
}
