import Foundation
import PostgresClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// Two servers on one PostgreSQL, as a fleet behind a load balancer runs: each lists the other's
/// live sessions, and a device that resumes its conversation on the other server while its old
/// connection still looks open moves there whole: the first server hands over (its connection gets
/// `resumed_elsewhere`, 4009), one owner per epoch, every acknowledged word stored once. A rename
/// sent to the other server is applied by the session's own server.
@Suite(.serialized) struct FleetEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static func fleetServer(database: String? = nil) throws -> TestServer {
        try TestServer(database: database) { $0.fleet.publishSeconds = 0.5 }
    }

    static func sessions(_ server: TestServer, token: String? = nil) throws -> [[String: Any]] {
        try server.json("/v1/sessions", token: token).body["sessions"] as? [[String: Any]] ?? []
    }

    /// The rows of `sql` as text, the columns named `a`, `b`, … in order.
    static func rows(_ url: String, _ sql: String, _ params: [PGValue?] = [], columns: Int = 1) throws -> [[String]] {
        try PGConnection(connectionString: url).query(sql, params).rows.map { row in
            try ["a", "b", "c"].prefix(columns).map { try row.decode(String?.self, column: $0) ?? "" }
        }
    }

    @Test func theOtherServerListsTheSessionAndAResumeThereTakesTheConversationOver() async throws {
        let first = try Self.fleetServer()
        let second = try Self.fleetServer(database: first.connectionString)
        let firstInstance = try #require(first.app.serverInstance)
        let secondInstance = try #require(second.app.serverInstance)
        let conversation = "fleet-" + UUID().uuidString.lowercased()
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }

        let old = try LiveConnection(client: client, url: first.ws, headers: first.authorization)
        old.send(RawMessages.start(device: "phone-fleet", conversation: conversation))
        old.send(RawMessages.silence(seconds: 3))
        old.send(RawMessages.segment("A", from: 0, to: 3))
        old.send(RawMessages.words("r1", ["first0", "first1"], from: 0.2))
        #expect(old.waitForStored(["first0", "first1"]))

        // The other server lists it, with who runs it; another device's token sees nothing of it.
        let listed = Polling.until(seconds: 30) {
            ((try? Self.sessions(second)) ?? []).contains { $0["conversation_id"] as? String == conversation }
        }
        #expect(listed)
        let entry = try #require(try Self.sessions(second).first { $0["conversation_id"] as? String == conversation })
        #expect(entry["server_instance"] as? Int == firstInstance)
        #expect(entry["device_id"] as? String == "phone-fleet")
        #expect(entry["provider"] as? String == "device")
        #expect(try second.json("/v1/sessions/\(conversation)").status == 200)
        let created = try second.request("POST", "/v1/devices/phone-other/tokens?label=t").json() as? [String: Any]
        let otherToken = try #require(created?["token"] as? String)
        #expect(try Self.sessions(second, token: otherToken).isEmpty)
        #expect(try second.json("/v1/sessions/\(conversation)", token: otherToken).status == 404)

        // A rename sent to the second server is applied by the session on the first: live, and its
        // device hears the new name at once.
        let renamed = try second.request("POST", "/v1/conversations/\(conversation)/speakers/Speaker%201", body: Array(#"{"name":"Ada"}"#.utf8))
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect((renamed.json() as? [String: Any])?["live"] as? Bool == true)
        #expect(Polling.until(seconds: 10) {
            old.recording.messages.contains { message in
                message["type"] as? String == "speakers"
                    && (message["speakers"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "Ada" }
            }
        })
        let unknown = try second.request("POST", "/v1/conversations/\(conversation)/speakers/Speaker%209", body: Array(#"{"name":"Bo"}"#.utf8))
        #expect(unknown.status == 404, "\(unknown.text)")

        // The device resumes on the second server (its old connection still open on the first).
        let new = try LiveConnection(client: client, url: second.ws, headers: second.authorization)
        new.send(RawMessages.start(device: "phone-fleet", conversation: conversation))
        #expect(old.waitForClose() == 4009)
        #expect(old.recording.errorCodes.contains("resumed_elsewhere"))
        #expect(Polling.until(seconds: 30) { new.recording.types.contains("session") })
        new.send(RawMessages.silence(seconds: 2))
        new.send(RawMessages.segment("A", from: 3, to: 5))
        new.send(RawMessages.words("r2", ["second0", "second1"], from: 3.2))
        new.send(#"{"type":"finalize"}"#)
        #expect(new.waitForClose() == 1000)
        #expect(new.recording.acknowledgedWords.isSuperset(of: ["second0", "second1"]))

        let words = try first.storedWords(conversation).map(\.text)
        #expect(words == ["first0", "first1", "second0", "second1"])
        let status = try Self.rows(first.connectionString, "SELECT status AS a FROM conversations WHERE id = $1", [conversation])
        #expect(status == [["finalized"]])
        // One server per epoch, the first's before the second's, and nothing written by an epoch after
        // a later one was claimed.
        let history = try Self.rows(first.connectionString,
            "SELECT epoch::text AS a, server_instance::text AS b FROM lease_history WHERE conversation_id = $1 ORDER BY epoch", [conversation],
            columns: 2)
        #expect(history == [["1", "\(firstInstance)"], ["2", "\(secondInstance)"]])
        let writers = try Self.rows(first.connectionString,
            "SELECT epoch::text AS a, server_instance::text AS b FROM conversation_writes WHERE conversation_id = $1 ORDER BY epoch",
            [conversation], columns: 2)
        #expect(writers == [["1", "\(firstInstance)"], ["2", "\(secondInstance)"]])
        let stale = try Self.rows(first.connectionString, """
            SELECT w.epoch::text AS a FROM conversation_writes w JOIN lease_history h
              ON h.conversation_id = w.conversation_id AND h.epoch > w.epoch AND h.acquired_at < w.last_at
            WHERE w.conversation_id = $1
            """, [conversation])
        #expect(stale.isEmpty)
        // Finalized: the lease is released, and neither server lists the session any more.
        #expect(Polling.until(seconds: 10) {
            ((try? Self.sessions(first)) ?? []).allSatisfy { $0["conversation_id"] as? String != conversation }
        })
    }
}
