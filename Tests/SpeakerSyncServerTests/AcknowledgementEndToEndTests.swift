import Foundation
import Logging
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// An acknowledgement is a promise: a word the device saw `stored: true` is in PostgreSQL, and a
/// close 1000 means everything it sent is. Each test makes one way of breaking that happen for real
/// (a NUL byte, a step PostgreSQL refuses, a start while PostgreSQL is down) against a real server,
/// real PostgreSQL and raw WebSocket clients that, like devices, do not wait for `session`.
@Suite(.serialized) struct AcknowledgementEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static func storedWords(_ database: String, _ conversationID: String) throws -> [String] {
        try PGConnection(connectionString: database)
            .query("SELECT text FROM words WHERE conversation_id = $1 ORDER BY start_seconds", [conversationID]).rows
            .map { try $0.decode(String.self, column: "text") }
    }

    static func conversationStatus(_ database: String, _ conversationID: String) throws -> (status: String, reason: String?)? {
        try PGConnection(connectionString: database)
            .query("SELECT status, status_reason FROM conversations WHERE id = $1", [conversationID]).rows.first
            .map { (try $0.decode(String.self, column: "status"), try $0.decode(String?.self, column: "status_reason")) }
    }

    /// Opens a raw connection and sends `messages` (text) and `audio` (binary) right away, as a
    /// device does; returns what it received until the server closed.
    static func session(_ server: TestServer, sending messages: [WebSocketMessage]) async throws -> SessionRecording {
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        for message in messages { connection.send(message) }
        return await SessionRecording.record(connection.events)
    }

    @Test func aWordWithNULIsRefusedNamedAndNoneOfItsMessageIsAcknowledged() async throws {
        let server = try TestServer()
        let conversation = "ack-nul-\(UInt32.random(in: 0...UInt32.max))"
        var poisoned = (0..<12).map { "first\($0)" }
        poisoned[5] = "he\u{0}llo"
        let recording = try await Self.session(server, sending: [
            .text(RawMessages.start(conversation: conversation)),
            .binary(RawMessages.silence(seconds: 9)),
            .text(RawMessages.segment("A", from: 0, to: 9)),
            .text(RawMessages.words("r1", poisoned, from: 0.1)),
            .text(RawMessages.words("r2", ["second0", "second1", "second2"], from: 5)),
            .text(#"{"type":"finalize"}"#),
        ])
        #expect(recording.types.first == "session")
        #expect(recording.closeCode == 1000)
        let refusal = recording.errors.first { $0["code"] as? String == "invalid_text" }
        #expect(refusal?["fatal"] as? Bool == false)
        let message = refusal?["message"] as? String ?? ""
        #expect(message.contains("r1") && message.contains("words[5].text"), "\(message)")
        // Nothing of the refused message reached the device as stored, or PostgreSQL at all.
        #expect(recording.transcriptWords.allSatisfy { !$0.text.hasPrefix("first") && !$0.text.contains("\u{0}") })
        #expect(recording.acknowledgedWords == ["second0", "second1", "second2"])
        #expect(try Self.storedWords(server.connectionString, conversation) == ["second0", "second1", "second2"])
        #expect(try Self.conversationStatus(server.connectionString, conversation)?.status == "finalized")
    }

    @Test(arguments: [("device_id", "pho\u{0}ne"), ("language", "en\u{0}US")])
    func aStartWithNULIsRejectedAndNothingIsStored(field: String, value: String) async throws {
        let server = try TestServer()
        let conversation = "ack-start-nul-\(UInt32.random(in: 0...UInt32.max))"
        var start: [String: Any] = ["type": "start", "device_id": "phone-ack", "provider": "device", "sample_rate": 16000,
                                    "encoding": "pcm_s16le", "conversation_id": conversation]
        start[field] = value
        let recording = try await Self.session(server, sending: [
            .text(RawMessages.json(start)),
            .binary(RawMessages.silence(seconds: 2)),
            .text(RawMessages.words("r1", ["hello", "world"], from: 0.1)),
            .text(#"{"type":"finalize"}"#),
        ])
        #expect(recording.errorCodes.first == "invalid_text")
        #expect((recording.errors.first?["message"] as? String)?.contains("\"\(field)\"") == true)
        #expect(recording.closeCode == 1007)
        #expect(!recording.types.contains("session") && !recording.types.contains("transcript"))
        #expect(try Self.conversationStatus(server.connectionString, conversation) == nil)
        let orphans = try PGConnection(connectionString: server.connectionString)
            .query("SELECT count(*)::int AS n FROM words WHERE conversation_id = $1", [conversation]).rows[0].decode(Int.self, column: "n")
        #expect(orphans == 0)
    }

    /// PostgreSQL refusing a step for good (here a trigger raising a data exception on one word, the
    /// way a constraint would): the session ends with storage_rejected, the words acknowledged before
    /// stay stored, and nothing after the refused step is ever acknowledged.
    @Test func aStepPostgreSQLRefusesEndsTheSessionAndNothingAfterItIsAcknowledged() async throws {
        let server = try TestServer()
        let admin = try PGConnection(connectionString: server.connectionString)
        try admin.executeScript("""
            CREATE FUNCTION refuse_poison() RETURNS trigger AS $$
            BEGIN
              IF NEW.text = 'poison' THEN RAISE EXCEPTION 'poisoned word' USING ERRCODE = '22023'; END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON words FOR EACH ROW EXECUTE FUNCTION refuse_poison();
            """)
        let conversation = "ack-rejected-\(UInt32.random(in: 0...UInt32.max))"
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        connection.send(.text(RawMessages.start(conversation: conversation)))
        connection.send(.binary(RawMessages.silence(seconds: 9)))
        connection.send(.text(RawMessages.segment("A", from: 0, to: 9)))
        connection.send(.text(RawMessages.words("r1", ["before0", "before1"], from: 0.1)))
        // Wait until the first words are acknowledged, so "before" is before.
        var acknowledged = false
        while !acknowledged, let message = await events.nextJSON() {
            let words = ((message["upserted"] as? [[String: Any]]) ?? []).flatMap { $0["words"] as? [[String: Any]] ?? [] }
            acknowledged = words.contains { $0["text"] as? String == "before1" && $0["stored"] as? Bool == true }
        }
        #expect(acknowledged)
        connection.send(.text(RawMessages.words("r2", ["poison"], from: 3)))
        connection.send(.text(RawMessages.words("r3", ["after0", "after1"], from: 5)))
        connection.send(.text(#"{"type":"finalize"}"#))
        let rest = await SessionRecording.record(connection.events)
        let rejection = rest.errors.first { $0["code"] as? String == "storage_rejected" }
        #expect(rejection?["fatal"] as? Bool == true)
        let message = rejection?["message"] as? String ?? ""
        #expect(message.contains("words"), "\(message)")
        #expect(!message.lowercased().contains("sqlstate") && !message.contains("22023") && !message.contains("poisoned"))
        #expect(rest.closeCode == 1011)
        #expect(!rest.acknowledgedWords.contains("poison") && !rest.acknowledgedWords.contains("after0"))
        let stored = try Self.storedWords(server.connectionString, conversation)
        #expect(stored.starts(with: ["before0", "before1"]) && !stored.contains("poison"))
        // The close goes out with the refusal; the conversation's end is stored right behind it.
        var status: String?
        for _ in 0..<100 {
            status = try Self.conversationStatus(server.connectionString, conversation)?.status
            if status == "interrupted" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(status == "interrupted")
    }
}

/// The same promises with PostgreSQL stopped under the server: a cluster of this suite's own.
@Suite(.serialized) struct StorageOutageEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static let cluster: EmbeddedPostgresCluster = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-outage-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var logger = Logger(label: "outage-cluster")
        logger.logLevel = .warning
        return EmbeddedPostgresCluster(dataDirectory: folder, logger: logger)
    }()

    static func server(startWaitSeconds: Double) async throws -> TestServer {
        let database = try await Blocking.run { try cluster.start() }
        return try TestServer(database: database) { $0.sessionLimits.startStorageWaitSeconds = startWaitSeconds }
    }

    @Test func aStartWhilePostgreSQLIsDownIsRefusedTryAgainLaterAndNothingIsAcknowledged() async throws {
        let server = try await Self.server(startWaitSeconds: 2)
        try await Blocking.run { Self.cluster.stop() }
        let conversation = "outage-refused-\(UInt32.random(in: 0...UInt32.max))"
        let recording = try await AcknowledgementEndToEndTests.session(server, sending: [
            .text(RawMessages.start(conversation: conversation)),
            .binary(RawMessages.silence(seconds: 3)),
            .text(RawMessages.segment("A", from: 0, to: 3)),
            .text(RawMessages.words("r1", ["lost0", "lost1"], from: 0.1)),
            .text(#"{"type":"finalize"}"#),
        ])
        // The only answer: the fatal refusal, then 4013. Never `session`, never a stored word, never 1000.
        #expect(recording.types == ["error"], "\(recording.messages)")
        #expect(recording.errorCodes == ["storage_unavailable"])
        #expect(recording.errors.first?["fatal"] as? Bool == true)
        #expect(recording.closeCode == 4013)
        let text = "\(recording.messages)"
        #expect(!text.contains("PGError") && !text.contains(".s.PGSQL") && !text.lowercased().contains("sqlstate"))
        let database = try await Blocking.run { try Self.cluster.start() }
        // Once PostgreSQL is back nothing of the refused start is there, active or otherwise.
        #expect(try AcknowledgementEndToEndTests.conversationStatus(database, conversation) == nil)
    }

    @Test func aStartHeldWhilePostgreSQLRestartsBeginsOnceItIsBackWithEverythingSentMeanwhile() async throws {
        let server = try await Self.server(startWaitSeconds: 30)
        try await Blocking.run { Self.cluster.stop() }
        let conversation = "outage-held-\(UInt32.random(in: 0...UInt32.max))"
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        connection.send(.text(RawMessages.start(conversation: conversation)))
        connection.send(.binary(RawMessages.silence(seconds: 3)))
        connection.send(.text(RawMessages.segment("A", from: 0, to: 3)))
        connection.send(.text(RawMessages.words("r1", ["held0", "held1"], from: 0.1)))
        connection.send(.text(#"{"type":"finalize"}"#))
        try await Task.sleep(for: .seconds(2))
        let database = try await Blocking.run { try Self.cluster.start() }
        let recording = await SessionRecording.record(connection.events)
        #expect(recording.types.first == "session", "\(recording.types)")
        #expect(recording.closeCode == 1000)
        #expect(recording.acknowledgedWords == ["held0", "held1"])
        #expect(try AcknowledgementEndToEndTests.storedWords(database, conversation) == ["held0", "held1"])
    }

    /// With PostgreSQL frozen (SIGSTOP: it accepts connections and never answers) the probes still
    /// answer: /livez at once, /readyz and /healthz "not ready"; and no client sees database text.
    @Test func probesAnswerAndErrorsStayCleanWhilePostgreSQLIsFrozen() async throws {
        let server = try await Self.server(startWaitSeconds: 2)
        let postmaster = try Self.postmasterTree()
        for pid in postmaster { kill(pid, SIGSTOP) }
        defer { for pid in postmaster { kill(pid, SIGCONT) } }
        // The readiness check notices within its deadlines (1–2 s); poll, bounded.
        var ready = try Self.probe(server, "/readyz")
        for _ in 0..<100 where ready.status == 200 {
            try await Task.sleep(for: .milliseconds(100))
            ready = try Self.probe(server, "/readyz")
        }
        #expect(ready.status == 503)
        #expect(ready.headers["retry-after"] != nil)
        #expect(try Self.probe(server, "/livez").status == 200)
        #expect(try Self.probe(server, "/healthz").status == 503)
        for pid in postmaster { kill(pid, SIGCONT) }
        var back = ready
        for _ in 0..<100 where back.status != 200 {
            try await Task.sleep(for: .milliseconds(100))
            back = try Self.probe(server, "/readyz")
        }
        #expect(back.status == 200)
    }

    @Test func aDatabaseOutageReachesHTTPClientsAsACodeAndARequestID() async throws {
        let server = try await Self.server(startWaitSeconds: 2)
        try await Blocking.run { Self.cluster.stop() }
        defer { _ = try? Self.cluster.start() }
        let response = try server.request("GET", "/v1/conversations")
        #expect(response.status == 503)
        let error = (response.json() as? [String: Any])?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "database_unavailable")
        let requestID = error?["request_id"] as? String
        #expect(requestID != nil && requestID == response.headers["x-request-id"])
        #expect(!response.text.contains("PGError") && !response.text.contains(".s.PGSQL") && !response.text.contains("/tmp"))
    }

    /// A probe as a load balancer sends it: no credential, and a short read bound (2 s), which a
    /// probe that waits on a frozen PostgreSQL would blow.
    static func probe(_ server: TestServer, _ path: String) throws -> SimpleHTTPResponse {
        try SimpleHTTPClient.get(server.http + path, token: nil, timeoutSeconds: 2)
    }

    /// The postmaster and its children (backends, writers): SIGSTOP on all of them freezes the cluster.
    static func postmasterTree() throws -> [pid_t] {
        let pidFile = try String(contentsOfFile: cluster.dataDirectory.path + "/postmaster.pid", encoding: .utf8)
        guard let postmaster = pid_t(pidFile.split(separator: "\n").first ?? "") else { return [] }
        var tree = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { tree.append(pid) }
        }
        return tree
    }
}

/// SIGTERM with live sessions: every session stores what it has, then hears `server_stopping` and a
/// close 1001 with the conversation to resume, instead of a dropped connection (1006).
@Suite(.serialized) struct OrderedShutdownEndToEndTests {
    @Test func sigtermStoresEachSessionThenClosesIt1001WithAResumeHint() async throws {
        let database = try TestCluster.freshDatabase()
        let server = try await Blocking.run { try ServerProcess(databaseURL: database) }
        let url = "ws://127.0.0.1:\(server.port)/v1/listen"
        let headers = [("authorization", "Bearer \(server.adminKey)")]
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let conversation = "shutdown-\(UInt32.random(in: 0...UInt32.max))"
        let started = try client.connect(url: url, headers: headers)
        let events = EventReader(started.events)
        started.send(.text(RawMessages.start(conversation: conversation)))
        started.send(.binary(RawMessages.silence(seconds: 4)))
        started.send(.text(RawMessages.segment("A", from: 0, to: 4)))
        started.send(.text(RawMessages.words("r1", ["kept0", "kept1"], from: 0.5)))
        var acknowledged = false
        while !acknowledged, let message = await events.nextJSON() {
            let words = ((message["upserted"] as? [[String: Any]]) ?? []).flatMap { $0["words"] as? [[String: Any]] ?? [] }
            acknowledged = words.contains { $0["text"] as? String == "kept1" && $0["stored"] as? Bool == true }
        }
        #expect(acknowledged)
        // A connection that never sent its start is closed the same way.
        let idle = try client.connect(url: url, headers: headers)
        let idleEnded = Task { await SessionRecording.record(idle.events) }
        try await Task.sleep(for: .milliseconds(300))

        let status = try await Blocking.run { server.terminate() }
        #expect(status == 0)
        let rest = await SessionRecording.record(started.events)
        #expect(rest.closeCode == 1001)
        let stopping = rest.errors.first { $0["code"] as? String == "server_stopping" }
        #expect(stopping?["fatal"] as? Bool == true)
        #expect((stopping?["message"] as? String)?.contains(conversation) == true)
        let idleRecording = await idleEnded.value
        #expect(idleRecording.closeCode == 1001)
        #expect(idleRecording.errorCodes == ["server_stopping"])
        #expect(try AcknowledgementEndToEndTests.storedWords(database, conversation) == ["kept0", "kept1"])
        let stored = try AcknowledgementEndToEndTests.conversationStatus(database, conversation)
        #expect(stored?.status == "interrupted")
        #expect(stored?.reason == "the server stopped")
    }
}

/// A client that sends and never reads costs the server a bounded amount: past the outgoing limit
/// reading pauses, and past the grace period the client is cut off with slow_reader (4008) and its
/// conversation stored as interrupted.
@Suite struct SlowReaderEndToEndTests {
    @Test func aClientThatNeverReadsIsCutOffAndItsConversationKept() async throws {
        let server = try EndToEndTests.TestServer {
            $0.sessionLimits.outboundPauseBytes = 64 << 10
            $0.sessionLimits.outboundResumeBytes = 16 << 10
            $0.sessionLimits.slowReaderGraceSeconds = 2
        }
        let conversation = "slow-reader-\(UInt32.random(in: 0...UInt32.max))"
        let socket = try RawConnection(port: server.port, timeoutSeconds: 5)
        socket.setSendTimeout(seconds: 3)
        try socket.upgrade(path: "/v1/listen", headers: server.authorization)
        try socket.sendText(RawMessages.start(conversation: conversation))
        try socket.sendBinary(RawMessages.silence(seconds: 30))
        try socket.sendText(RawMessages.segment("A", from: 0, to: 100_000))
        // One speaker without pauses: one utterance that grows, which every update carries whole, so
        // the server's unread answers outgrow the kernel's socket buffers quickly.
        var sent = 0
        for batch in 0..<400 {
            let texts = (0..<50).map { "w\(batch)x\($0)" }
            guard (try? socket.sendText(RawMessages.words("r\(batch)", texts, from: Double(batch) * 15))) != nil else { break }
            sent += 1
        }
        #expect(sent > 0)
        var stored: (status: String, reason: String?)?
        for _ in 0..<300 {
            stored = try AcknowledgementEndToEndTests.conversationStatus(server.connectionString, conversation)
            if stored?.status == "interrupted" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(stored?.status == "interrupted")
        #expect(stored?.reason == "the client did not read what the server sent")
        // The socket stays open until the server has cut it: Swift may free an object after its last
        // use, and a closed socket is "the connection closed before finalize", which a loaded CI run
        // once recorded when the server's grace ran out after the send loop instead of during it.
        withExtendedLifetime(socket) {}
    }
}

private struct UpgradeRefused: Error { var head: String }

/// Just enough of a WebSocket client to send masked frames and never read (which the real clients
/// in this package never do).
private extension RawConnection {
    func upgrade(path: String, headers: [(String, String)]) throws {
        let extra = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        try send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n")
        let head = try readHead()
        guard head.hasPrefix("HTTP/1.1 101") else { throw UpgradeRefused(head: head) }
    }

    func sendText(_ text: String) throws { try send(bytes: WebSocketFrames.masked(opcode: 0x1, Array(text.utf8))) }
    func sendBinary(_ bytes: [UInt8]) throws {
        // Frames of at most 64 KiB, as a device sends audio.
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + 65_536)
            try send(bytes: WebSocketFrames.masked(opcode: 0x2, Array(bytes[offset..<end])))
            offset = end
        }
    }
}
