import Foundation
import MeetingSynth
import PostgresClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncClient

/// Server processes of one fleet on one PostgreSQL, failing as servers do: SIGKILLed behind HAProxy
/// (the device finishes on the other server), SIGSTOPped past their lease and resumed (they write
/// nothing more), and killed with a re-diarization job they accepted (the other server finishes it).
@Suite(.serialized) struct FleetFailoverEndToEndTests {
    static let leaseArguments = ["--lease-seconds", "2"]

    static func start(_ database: String, extra: [String] = []) async throws -> ServerProcess {
        try await Blocking.run { try ServerProcess(databaseURL: database, extraArguments: leaseArguments + extra) }
    }

    /// The port of the server whose session holds `conversationID` now (nil: none).
    static func ownerPort(_ database: String) throws -> Int? {
        let address = try PGConnection(connectionString: database).query("""
            SELECT f.address FROM conversation_leases c JOIN fleet_servers f USING (server_instance)
            WHERE c.server_instance IS NOT NULL LIMIT 1
            """).rows.first?.decode(String.self, column: "address")
        return address.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } }
    }

    static func count(_ database: String, _ sql: String, _ conversationID: String) throws -> Int {
        try PGConnection(connectionString: database).query(sql, [conversationID]).rows[0].decode(Int.self, column: "n")
    }

    /// No epoch written by two servers, nothing written under an epoch after a later one was claimed.
    static func expectFencingHeld(_ database: String, _ conversationID: String) throws {
        #expect(try count(database, """
            SELECT count(*)::int AS n FROM (SELECT epoch FROM conversation_writes WHERE conversation_id = $1
                                            GROUP BY epoch HAVING count(DISTINCT server_instance) > 1) twice
            """, conversationID) == 0)
        #expect(try count(database, """
            SELECT count(*)::int AS n FROM conversation_writes w JOIN lease_history h
              ON h.conversation_id = w.conversation_id AND h.epoch > w.epoch AND h.acquired_at < w.last_at
            WHERE w.conversation_id = $1
            """, conversationID) == 0)
    }

    /// How a Deployment's replicas start: together, on a database nobody migrated yet.
    @Test func twoServersStartedTogetherOnAFreshDatabaseBothComeUp() async throws {
        let database = try TestCluster.freshDatabase()   // not migrated: both servers find it empty
        async let one = Self.start(database)
        async let two = Self.start(database)
        let (first, second) = try await (one, two)
        defer {
            first.kill()
            second.kill()
        }
        #expect(ServerProcess.answers(port: first.port) && ServerProcess.answers(port: second.port))
        #expect(try Self.count(database, "SELECT count(*)::int AS n FROM fleet_servers WHERE $1 <> ''", "x") == 2)
    }

    @Test(.enabled(if: HAProxyProcess.isInstalled))
    func aDeviceWhoseServerIsKilledBehindHAProxyFinishesOnTheOther() async throws {
        let database = try TestCluster.freshDatabase()
        let first = try await Self.start(database)
        let second = try await Self.start(database)
        let proxy = try HAProxyProcess(backendPorts: [first.port, second.port])
        defer {
            proxy.stop()
            first.kill()
            second.kill()
        }
        let meeting = try ResilienceEndToEndTests.meeting(seed: 35)
        let killed = KilledPort()
        let report = try await ResilienceEndToEndTests.streamThrough(
            meeting, url: "ws://127.0.0.1:\(proxy.port)/v1/listen", token: first.adminKey, databaseURL: database, speed: 6, fraction: 0.3
        ) {
            let port = try Self.ownerPort(database)
            killed.port = port
            if port == first.port { first.kill() } else { second.kill() }
        }
        #expect(killed.port != nil, "no server held the conversation")
        #expect(report.outcome == .finalized, "\(String(describing: report.outcome)) \(report.errors)")
        #expect(report.sessionCount >= 2)
        try ResilienceEndToEndTests.expectEveryWordOnce(meeting, databaseURL: database, conversationID: report.conversationID)
        #expect(try Self.count(database, "SELECT count(DISTINCT server_instance)::int AS n FROM lease_history WHERE conversation_id = $1",
                               report.conversationID) == 2)
        #expect(try Self.count(database, "SELECT count(*)::int AS n FROM conversations WHERE id = $1 AND status = 'finalized'",
                               report.conversationID) == 1)
        try Self.expectFencingHeld(database, report.conversationID)
    }

    @Test func aServerPausedPastItsLeaseWritesNothingAfterTheOtherTookItsConversation() async throws {
        let database = try TestCluster.freshDatabase()
        let first = try await Self.start(database)
        let second = try await Self.start(database)
        defer {
            first.resume()
            first.kill()
            second.kill()
        }
        // Both renew at least once with the other live, so the first knows it has a peer.
        try await Task.sleep(for: .seconds(1.5))
        let conversation = "paused-" + UUID().uuidString.lowercased()
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let headers = [("authorization", "Bearer \(first.adminKey)")]
        let old = try LiveConnection(client: client, url: "ws://127.0.0.1:\(first.port)/v1/listen", headers: headers)
        old.send(RawMessages.start(device: "phone-paused", conversation: conversation))
        old.send(RawMessages.silence(seconds: 2))
        old.send(RawMessages.segment("A", from: 0, to: 2))
        old.send(RawMessages.words("r1", ["kept0", "kept1"], from: 0.2))
        #expect(old.waitForStored(["kept0", "kept1"]))

        // Paused (a VM stall): the words sent now wait in its socket.
        first.pause()
        old.send(RawMessages.silence(seconds: 1))
        old.send(RawMessages.words("r9", ["stale0", "stale1"], from: 2.2))
        // The device gives up on it and resumes on the other server, which takes the conversation once
        // the first one's lease has lapsed.
        let new = try LiveConnection(client: client, url: "ws://127.0.0.1:\(second.port)/v1/listen", headers: headers)
        new.send(RawMessages.start(device: "phone-paused", conversation: conversation))
        #expect(Polling.until(seconds: 30) { new.recording.types.contains("session") }, "\(new.recording.texts)")
        new.send(RawMessages.silence(seconds: 2))
        new.send(RawMessages.segment("A", from: 2, to: 4))
        new.send(RawMessages.words("r2", ["moved0", "moved1"], from: 2.4))
        new.send(#"{"type":"finalize"}"#)
        #expect(new.waitForClose() == 1000)

        // Resumed, the first server finds its lease lapsed: it ends the old session and writes nothing.
        first.resume()
        let code = old.waitForClose()
        #expect(code == 1001 || code == 4009, "\(String(describing: code)) \(old.recording.texts.suffix(2))")
        #expect(!old.recording.acknowledgedWords.contains("stale0"))
        try await Task.sleep(for: .seconds(1))
        let words = try PGConnection(connectionString: database)
            .query("SELECT text FROM words WHERE conversation_id = $1 ORDER BY start_seconds", [conversation]).rows
            .map { try $0.decode(String.self, column: "text") }
        #expect(words == ["kept0", "kept1", "moved0", "moved1"])
        #expect(try Self.count(database, "SELECT count(*)::int AS n FROM conversations WHERE id = $1 AND status = 'finalized'", conversation) == 1)
        try Self.expectFencingHeld(database, conversation)
    }

    @Test func aJobAcceptedByAServerThatIsKilledIsFinishedByTheOther() async throws {
        let database = try TestCluster.freshDatabase()
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let first = try await Self.start(database, extra: ["--plugins", plugins.path])
        let second = try await Self.start(database, extra: ["--plugins", plugins.path])
        defer {
            first.kill()
            second.kill()
        }
        let token = try DurableJobsEndToEndTests.token(first, device: "phone-job")
        // Seed 49: not used elsewhere.
        let (conversation, wordCount) = try await DurableJobsEndToEndTests.storedMeeting(first, token: token, device: "phone-job", seed: 49, turns: 3)
        // 200 ms a 100 ms push: the job is surely unfinished when its server dies.
        let started = try DurableJobsEndToEndTests.request(first, "POST", "/v1/conversations/\(conversation)/diarize?provider=faulty",
                                                           body: #"{"options":{"delay_ms":200}}"#, token: token)
        #expect(started.status == 202, "\(started.text)")
        let jobID = try #require((started.json() as? [String: Any])?["id"] as? String)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try DurableJobsEndToEndTests.row(database, jobID)?.status != "done")
        try await Blocking.run { first.kill() }

        // The other server, running all along, recovers and finishes it; the id still answers.
        let job = try await DurableJobsEndToEndTests.finished(second, "/v1/diarization-jobs/\(jobID)", token: token)
        #expect(job["status"] as? String == "done", "\(job)")
        #expect(try Self.count(database, "SELECT count(*)::int AS n FROM labelling_words WHERE conversation_id = $1 AND name = 'faulty:rediarized'",
                               conversation) == wordCount)
    }
}

/// The port the disruption killed, read after the stream.
private final class KilledPort: @unchecked Sendable { // written once inside the disruption, read after it
    var port: Int?
}
