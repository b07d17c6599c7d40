import Foundation
import Logging
import MeetingSynth
import PostgresClient
import ProviderIsolation
import SpeakerSyncClient
import SpeakerSyncStore
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// The server with its providers in worker processes (the default), a real libwebsockets port, real
/// PostgreSQL, and the test-only `faulty` provider beside a copy of `energy`: a provider that crashes,
/// hangs or keeps crashing fails its own sessions with the documented error and close code, never the
/// server or the other provider's sessions; what was stored stays stored and can be resumed.
@Suite(.serialized) struct ProviderIsolationEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static func server(_ plugins: URL, database: String? = nil, adjust: (inout ProviderIsolationConfig) -> Void = { _ in }) throws -> TestServer {
        try TestServer(database: database) { config in
            config.pluginsDirectory = plugins.path
            config.providerIsolation.crashLoop.initialBackoffSeconds = 0.05
            config.providerIsolation.niceIncrement = 0
            adjust(&config.providerIsolation)
        }
    }

    static let meeting: SynthesizedMeeting = {
        let script = try! MeetingScript.generate(seed: 21, speakerCount: 2, turnCount: 6)
        return try! MeetingSynthesizer().synthesize(script, seed: 21)
    }()

    static var words: [DeviceWord] {
        meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
    }

    /// One device stream on a client of its own (two run at once).
    static func stream(_ config: DeviceStreamConfig, audio: [Float], words: [DeviceWord]) async throws -> StreamReport {
        var config = config
        if config.token == nil { config.token = TestServer.adminKey }
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        return try await DeviceStreamer(client: client, config: config, logger: EndToEndTests.logger)
            .stream(audio: audio, sampleRate: 16_000, words: words, segments: [])
    }

    func conversationRow(_ server: TestServer, _ id: String) throws -> (status: String, reason: String?) {
        let row = try PGConnection(connectionString: server.connectionString)
            .query("SELECT status, status_reason FROM conversations WHERE id = $1", [id]).rows[0]
        return (try row.decode(String.self, column: "status"), try row.decode(String?.self, column: "status_reason"))
    }

    /// A shadow whose provider crashes mid-session stops alone: the session finishes with close 1000
    /// and every word labelled by its own provider, the shadow's labelling is stored as incomplete
    /// with the reason, and the failure is counted.
    @Test func aCrashingShadowStopsAloneAndTheSessionFinishes() async throws {
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let server = try Self.server(plugins)
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-shadow-crash")
        config.shadowProviders = ["faulty"]
        // faulty crashes on its 81st chunk (8 s into the meeting).
        config.shadowOptionsJSON = ["faulty": #"{"fault":"crash","after":80}"#]
        config.speed = 4
        let report = try await Self.stream(config, audio: Self.meeting.audio, words: Self.words)
        #expect(report.closeCode == 1000)
        #expect(report.transcript.words.count == Self.meeting.words.count)
        #expect(report.transcript.words.allSatisfy { $0.speaker != nil })
        let labellings = try server.json("/v1/conversations/\(report.conversationID)/labellings").body["labellings"] as? [[String: Any]] ?? []
        let byName = Dictionary(uniqueKeysWithValues: labellings.compactMap { l in (l["name"] as? String).map { ($0, l) } })
        #expect(byName["energy"]?["complete"] as? Bool == true)
        #expect(byName["faulty"]?["complete"] as? Bool == false)
        #expect((byName["faulty"]?["status_reason"] as? String)?.contains("failed") == true, "\(byName["faulty"] ?? [:])")
        let metrics = try server.request("GET", "/metrics").text
        #expect(metrics.contains(#"speakersync_shadow_failures_total{code="provider_crashed",provider="faulty"} 1"#), "\(metrics.split(separator: "\n").filter { $0.contains("shadow") })")
    }

    @Test func aCrashingProviderFailsItsSessionWhileAnotherProviderFinishesAndTheConversationCanBeResumed() async throws {
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let server = try Self.server(plugins)
        let meeting = Self.meeting
        // faulty crashes on its 81st chunk (8 s); energy streams the whole meeting at the same time.
        var crashing = DeviceStreamConfig(url: server.ws, provider: "faulty", deviceID: "phone-crash")
        crashing.optionsJSON = #"{"fault":"crash","after":80}"#
        crashing.speed = 4
        var healthy = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-healthy")
        healthy.speed = 4
        async let crashed = Self.stream(crashing, audio: meeting.audio, words: Self.words)
        async let finished = Self.stream(healthy, audio: meeting.audio, words: Self.words)
        let (failed, completed) = try await (crashed, finished)

        #expect(failed.closeCode == 1011)
        #expect(failed.errors.map(\.code) == ["provider_failed"])
        #expect(failed.errors.first?.message == "provider faulty crashed: signal 11 (SIGSEGV)")
        // The conversation is interrupted with the reason. Every word sent before the chunk that crashed
        // the provider is stored: the device sends a result once its audio is out (after chunk 80 for
        // those available by 8 s), and the session handles it before it hands chunk 81 over. Every
        // word the device was told is stored is stored.
        #expect(Polling.until(seconds: 30) { (try? conversationRow(server, failed.conversationID).status) == "interrupted" })
        let row = try conversationRow(server, failed.conversationID)
        #expect(row.reason == "provider faulty crashed: signal 11 (SIGSEGV)")
        let rows = try server.storedWords(failed.conversationID).map(\.text)
        let sentBeforeCrash = DeviceInput.results(from: Self.words).filter { $0.availableAtSeconds <= 8.0 }.flatMap(\.words).map(\.text)
        #expect(!sentBeforeCrash.isEmpty)
        #expect(Set(sentBeforeCrash).isSubset(of: Set(rows)))
        #expect(Set(failed.transcript.words.filter(\.stored).map(\.text)).isSubset(of: Set(rows)))
        #expect(Set(rows).isSubset(of: Set(Self.words.map(\.text))))

        #expect(completed.closeCode == 1000)
        #expect(completed.errors.isEmpty, "\(completed.errors)")
        #expect(completed.transcript.words.count == meeting.words.count)
        #expect(try server.storedWords(completed.conversationID).count == meeting.words.count)

        // The device resumes the conversation with another provider and finishes it.
        let sent = Set(rows)
        var resume = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-crash")
        resume.conversationID = failed.conversationID
        let offset = Double(80 * 1600) / Double(meeting.sampleRate)
        resume.audioOffsetSeconds = offset
        let rest = Array(meeting.audio[80 * 1600 ..< meeting.audio.count])
        let later = Self.words.filter { !sent.contains($0.text) && $0.startSeconds >= offset }
            .map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds - offset, endSeconds: $0.endSeconds - offset) }
        let resumed = try await server.stream(resume, audio: rest, sampleRate: meeting.sampleRate, words: later)
        #expect(resumed.closeCode == 1000)
        #expect(resumed.conversationID == failed.conversationID)
        #expect(try conversationRow(server, failed.conversationID).status == "finalized")
        #expect(try server.storedWords(failed.conversationID).count == rows.count + later.count)

        // The crashed provider's worker came back: a new session on it finishes.
        let again = try await server.stream(DeviceStreamConfig(url: server.ws, provider: "faulty", deviceID: "phone-again"),
                                             audio: Array(meeting.audio.prefix(48_000)), sampleRate: meeting.sampleRate, words: [])
        #expect(again.closeCode == 1000)
    }

    @Test func aHangingProviderIsStoppedByTheWatchdog() async throws {
        let plugins = try TestPlugins.folder(copying: [], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let server = try Self.server(plugins) { $0.deadlines.pushSeconds = 0.5 }
        var config = DeviceStreamConfig(url: server.ws, provider: "faulty", deviceID: "phone-hang")
        config.optionsJSON = #"{"fault":"hang","after":5}"#
        let report = try await server.stream(config, audio: Array(Self.meeting.audio.prefix(32_000)), sampleRate: 16_000, words: [])
        #expect(report.closeCode == 1011)
        #expect(report.errors.first?.code == "provider_failed")
        #expect(report.errors.first?.message.hasPrefix("provider faulty hung: push_audio of session ") == true)
        #expect(report.errors.first?.message.contains("did not return within 0.5 s") == true)
        #expect(try server.json("/healthz").status == 200)
    }

    @Test func aProviderThatKeepsCrashingIsListedUnavailableAndRefused() async throws {
        let plugins = try TestPlugins.folder(copying: [], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let server = try Self.server(plugins) {
            $0.crashLoop.threshold = 2
            $0.crashLoop.quarantineSeconds = 600
        }
        var crashing = DeviceStreamConfig(url: server.ws, provider: "faulty", deviceID: "phone-loop")
        crashing.optionsJSON = #"{"fault":"crash"}"#
        for _ in 0 ..< 2 {
            let report = try await server.stream(crashing, audio: Array(Self.meeting.audio.prefix(16_000)), sampleRate: 16_000, words: [])
            #expect(report.closeCode == 1011)
        }
        var faulty: [String: Any]?
        let listed = Polling.until(seconds: 30) {
            let providers = (try? server.json("/v1/providers").body["providers"]) as? [[String: Any]]
            faulty = providers?.first { $0["id"] as? String == "faulty" }
            return faulty?["available"] as? Bool == false
        }
        #expect(listed)
        let reason = faulty?["unavailable_reason"] as? String ?? ""
        #expect(reason.hasPrefix("crashed 2 times within 60 s; last: provider faulty crashed: signal 11 (SIGSEGV); held back for "), "\(reason)")
        #expect((faulty?["retry_after_seconds"] as? Int ?? 0) > 500)
        #expect(try server.json("/v1/providers").body["isolation"] as? String == "process")

        // A start on it is refused before the session begins: error, then close 4001 (try again later).
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        connection.send(.text(#"{"type":"start","device_id":"phone-loop","provider":"faulty","sample_rate":16000,"encoding":"pcm_s16le"}"#))
        let refusal = await events.nextJSON()
        #expect(refusal?["code"] as? String == "provider_unavailable")
        #expect(refusal?["fatal"] as? Bool == true)
        #expect((refusal?["message"] as? String)?.hasPrefix("provider faulty is unavailable: crashed 2 times") == true)
        #expect(await events.closeCode() == 4001)
    }

    @Test func conversationsLeftActiveByAServerThatDiedAreInterruptedAtTheNextStart() throws {
        // A first server creates the schema; then rows as servers that died and one that still runs left them.
        let database = try TestCluster.freshDatabase()
        try TestServer(database: database).app.shutdown()
        let writer = try PGConnection(connectionString: database)
        let alive = try PGConnection(connectionString: database)
        let liveInstance = try alive.query("SELECT nextval('server_instances')::int AS n").rows[0].decode(Int.self, column: "n")
        try alive.execute("SELECT pg_advisory_lock($1, $2)", [ServerLease.lockClass, Int32(liveInstance)])
        for (id, instance) in [("orphan-old", nil), ("orphan-dead", 999), ("still-running", liveInstance)] as [(String, Int?)] {
            try writer.execute("""
                INSERT INTO conversations (id, device_id, provider, sample_rate, encoding, status, server_instance)
                VALUES ($1, 'phone', 'energy', 16000, 'pcm_s16le', 'active', $2)
                """, [id, instance])
        }
        let server = try TestServer(database: database)
        for id in ["orphan-old", "orphan-dead"] {
            let row = try conversationRow(server, id)
            #expect(row.status == "interrupted", "\(id)")
            #expect(row.reason == "the server running its session stopped before the session ended")
        }
        #expect(try conversationRow(server, "still-running").status == "active")
        let (_, summary) = try server.json("/v1/conversations/orphan-dead")
        #expect(summary["status_reason"] as? String == "the server running its session stopped before the session ended")
    }

    @Test func aServerThatStopsStoresItsOpenSessionsAsInterrupted() async throws {
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: false)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let server = try Self.server(plugins)
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        let id = "stopping-\(UUID().uuidString.prefix(8))"
        connection.send(.text(#"{"type":"start","device_id":"phone-stop","provider":"energy","sample_rate":16000,"encoding":"pcm_s16le","conversation_id":"\#(id)"}"#))
        #expect(await events.nextJSON()?["type"] as? String == "session")
        connection.send(.binary([UInt8](repeating: 0, count: 32_000)))
        server.app.shutdown()
        let row = try PGConnection(connectionString: server.connectionString)
            .query("SELECT status, status_reason FROM conversations WHERE id = $1", [id]).rows[0]
        #expect(try row.decode(String.self, column: "status") == "interrupted")
        #expect(try row.decode(String?.self, column: "status_reason") == "the server stopped")
    }
}
