import ChildProcesses
import Foundation
import Logging
import MeetingSynth
import PostgresClient
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport

/// The device side never loses a word: a stream through SpeakerSyncKit survives the server being
/// killed (SIGKILL) and started again, the network dropping every connection, and PostgreSQL
/// restarting, and ends with every word stored exactly once under stable labels.
@Suite(.serialized) struct ResilienceEndToEndTests {
    static let logger: Logger = EndToEndTests.logger

    struct Meeting {
        var audio: [Float]
        var sampleRate: Int
        var words: [DeviceWord]
        var segments: [DeviceSegment]
        var speakers: [String] // the true speaker of each word, in order
    }

    static func meeting(seed: UInt64) throws -> Meeting {
        let script = try MeetingScript.generate(seed: seed, speakerCount: 3, turnCount: 14)
        let synthesized = try MeetingSynthesizer().synthesize(script, seed: seed)
        return Meeting(
            audio: synthesized.audio, sampleRate: synthesized.sampleRate,
            words: synthesized.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) },
            segments: synthesized.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) },
            speakers: synthesized.words.map(\.speaker))
    }

    /// Streams `meeting` with reconnects on, at `speed`× real time, while `disrupt` runs once
    /// `fraction` of the words are stored.
    static func streamThrough(_ meeting: Meeting, url: String, token: String, databaseURL: String, speed: Double,
                              fraction: Double, disrupt: @escaping @Sendable () async throws -> Void) async throws -> StreamReport {
        var config = DeviceStreamConfig(url: url, provider: "device", deviceID: "phone-resilient")
        config.token = token
        config.reconnect = ReconnectPolicy(initialDelaySeconds: 0.1, maxDelaySeconds: 1, maxAttempts: 200)
        config.speed = speed
        config.volatileResults = true
        let conversationID = UUID().uuidString.lowercased()
        config.conversationID = conversationID
        let client = try WebSocketClient(logger: logger)
        defer { client.shutdown() }
        let streamer = DeviceStreamer(client: client, config: config, logger: logger)
        async let report = streamer.stream(audio: meeting.audio, sampleRate: meeting.sampleRate, words: meeting.words, segments: meeting.segments)
        // Disrupt once part of the meeting is stored (read straight from PostgreSQL).
        let target = Int(Double(meeting.words.count) * fraction)
        var disrupted = false
        for _ in 0..<3000 where !disrupted {
            if let count = try? storedWordCount(databaseURL, conversationID), count >= target {
                try await disrupt()
                disrupted = true
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(disrupted, "the stream never reached \(target) stored words")
        return try await report
    }

    static func storedWordCount(_ databaseURL: String, _ conversationID: String) throws -> Int {
        try PGConnection(connectionString: databaseURL)
            .query("SELECT count(*)::int AS n FROM words WHERE conversation_id = $1", [conversationID]).rows[0].decode(Int.self, column: "n")
    }

    /// Every word stored exactly once, labelled, and each true speaker under one label throughout.
    static func expectEveryWordOnce(_ meeting: Meeting, databaseURL: String, conversationID: String) throws {
        let rows = try PGConnection(connectionString: databaseURL).query(
            "SELECT text, start_seconds, speaker FROM words WHERE conversation_id = $1 ORDER BY start_seconds, result_id, word_index",
            [conversationID]).rows
        let stored = try rows.map { (text: try $0.decode(String.self, column: "text"), start: try $0.decode(Double.self, column: "start_seconds"),
                                     speaker: try $0.decode(String?.self, column: "speaker")) }
        #expect(stored.count == meeting.words.count, "stored \(stored.count) of \(meeting.words.count) words")
        #expect(stored.map(\.text) == meeting.words.map(\.text))
        let keys = Set(stored.map { "\($0.text)|\(Int(($0.start * 1000).rounded()))" })
        #expect(keys.count == stored.count, "a word was stored twice")
        #expect(stored.allSatisfy { $0.speaker != nil }, "words without a speaker")
        // Stable labels: each true speaker maps to exactly one label, and no label to two speakers.
        var labelOf: [String: Set<String>] = [:]
        for (truth, row) in zip(meeting.speakers, stored) { labelOf[truth, default: []].insert(row.speaker ?? "-") }
        #expect(labelOf.values.allSatisfy { $0.count == 1 }, "\(labelOf)")
        #expect(Set(labelOf.values.compactMap(\.first)).count == labelOf.count, "\(labelOf)")
    }

    @Test func aStreamSurvivesTheServerBeingKilledAndStartedAgain() async throws {
        let database = try TestCluster.freshDatabase()
        let first = try await Blocking.run { try ServerProcess(databaseURL: database) }
        let port = first.port
        let meeting = try Self.meeting(seed: 31)
        let holder = Holder()
        let report = try await Self.streamThrough(
            meeting, url: "ws://127.0.0.1:\(port)/v1/listen", token: first.adminKey, databaseURL: database, speed: 6, fraction: 0.3
        ) {
            try await Blocking.run { first.kill() } // SIGKILL mid-stream: nothing flushed, the socket just dies
            try await Task.sleep(for: .milliseconds(500))
            holder.server = try await Blocking.run { try ServerProcess(databaseURL: database, port: port) }
        }
        #expect(report.outcome == .finalized, "\(String(describing: report.outcome)) \(report.errors)")
        #expect(report.sessionCount >= 2)
        try Self.expectEveryWordOnce(meeting, databaseURL: database, conversationID: report.conversationID)
        let status = try PGConnection(connectionString: database)
            .query("SELECT status FROM conversations WHERE id = $1", [report.conversationID]).rows[0].decode(String.self, column: "status")
        #expect(status == "finalized")
        holder.server?.kill()
    }

    @Test func aStreamSurvivesTheNetworkDroppingEveryConnection() async throws {
        let database = try TestCluster.freshDatabase()
        let server = try await Blocking.run { try ServerProcess(databaseURL: database) }
        let proxy = try TCPProxy(upstreamPort: server.port)
        let meeting = try Self.meeting(seed: 32)
        let report = try await Self.streamThrough(
            meeting, url: "ws://127.0.0.1:\(proxy.port)/v1/listen", token: server.adminKey, databaseURL: database, speed: 6, fraction: 0.3
        ) {
            proxy.dropAll()
            try await Task.sleep(for: .milliseconds(300))
            proxy.dropAll() // again, while it reconnects
        }
        #expect(report.outcome == .finalized, "\(String(describing: report.outcome)) \(report.errors)")
        #expect(report.sessionCount >= 2)
        try Self.expectEveryWordOnce(meeting, databaseURL: database, conversationID: report.conversationID)
        proxy.stop()
    }

    @Test func aStreamSurvivesPostgreSQLRestarting() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-pgrestart-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        var clusterLogger = Logger(label: "pg-restart")
        clusterLogger.logLevel = .warning
        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, logger: clusterLogger)
        let database = try await Blocking.run { try cluster.start() }
        defer { cluster.stop() }
        let server = try await Blocking.run { try ServerProcess(databaseURL: database) }
        let meeting = try Self.meeting(seed: 33)
        let report = try await Self.streamThrough(
            meeting, url: "ws://127.0.0.1:\(server.port)/v1/listen", token: server.adminKey, databaseURL: database, speed: 6, fraction: 0.3
        ) {
            try await Blocking.run { cluster.stop() }
            try await Task.sleep(for: .milliseconds(1500))
            _ = try await Blocking.run { try cluster.start() }
        }
        #expect(report.outcome == .finalized, "\(String(describing: report.outcome)) \(report.errors)")
        try Self.expectEveryWordOnce(meeting, databaseURL: database, conversationID: report.conversationID)
        server.kill()
    }
}

extension ResilienceEndToEndTests {
    /// The CLI's `stream` (a device in a terminal) rides out the same crash: it exits 0 with the whole
    /// transcript, and PostgreSQL holds every word once.
    @Test func theStreamCommandSurvivesAServerRestart() async throws {
        let database = try TestCluster.freshDatabase()
        let first = try await Blocking.run { try ServerProcess(databaseURL: database) }
        let port = first.port
        let meeting = try Self.meeting(seed: 34)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try WAVWriter.write(AudioBuffer(samples: meeting.audio, sampleRate: meeting.sampleRate), to: folder.appendingPathComponent("m.wav"))
        let words = ["words": meeting.words.map { ["text": $0.text, "start": $0.startSeconds, "end": $0.endSeconds] }]
        try JSONSerialization.data(withJSONObject: words).write(to: folder.appendingPathComponent("m.json"))
        let segments = ["segments": meeting.segments.map { ["speaker": $0.speaker, "start": $0.startSeconds, "end": $0.endSeconds] as [String: Any] }]
        try JSONSerialization.data(withJSONObject: segments).write(to: folder.appendingPathComponent("s.json"))
        let conversationID = UUID().uuidString.lowercased()

        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("speakersync")
        let arguments = ["stream", folder.appendingPathComponent("m.wav").path, "--words", folder.appendingPathComponent("m.json").path,
                             "--segments", folder.appendingPathComponent("s.json").path, "--provider", "device", "--device-id", "phone-cli",
                             "--url", "ws://127.0.0.1:\(port)/v1/listen", "--speed", "6", "--conversation-id", conversationID, "--format", "json"]
        var environment = ProcessInfo.processInfo.environment
        environment["SPEAKERSYNC_TOKEN"] = first.adminKey
        var configuration = Subprocess.Configuration(executable: executable.path, arguments: arguments, environment: environment)
        configuration.standardOutput = .pipe
        let process = try Subprocess(configuration)
        let output = process.standardOutput!
        let printed = Task.detached { output.readDataToEndOfFile() }

        var restarted: ServerProcess?
        for _ in 0..<3000 where restarted == nil {
            if let count = try? Self.storedWordCount(database, conversationID), count >= meeting.words.count * 3 / 10 {
                try await Blocking.run { first.kill() }
                try await Task.sleep(for: .milliseconds(500))
                restarted = try await Blocking.run { try ServerProcess(databaseURL: database, port: port) }
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(restarted != nil)
        let data = await printed.value
        let exit = try await Blocking.run { process.waitUntilExit() }
        #expect(exit.succeeded)
        let transcript = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let printedWords = (transcript?["utterances"] as? [[String: Any]] ?? []).flatMap { $0["words"] as? [[String: Any]] ?? [] }
        #expect(printedWords.count == meeting.words.count)
        try Self.expectEveryWordOnce(meeting, databaseURL: database, conversationID: conversationID)
        restarted?.kill()
    }
}

extension ResilienceEndToEndTests {
    static func storedTranscript(_ databaseURL: String, _ conversationID: String) throws -> [String] {
        try PGConnection(connectionString: databaseURL).query(
            "SELECT text, start_seconds, speaker FROM words WHERE conversation_id = $1 ORDER BY start_seconds, result_id, word_index",
            [conversationID]).rows.map {
            "\(try $0.decode(String.self, column: "text"))@\(Int((try $0.decode(Double.self, column: "start_seconds") * 1000).rounded())):\(try $0.decode(String?.self, column: "speaker") ?? "-")"
        }
    }

    /// A device that starts recording while the server is down keeps everything (on disk, in the
    /// kit's spool), uploads it when the server comes up, and ends with the transcript a device
    /// streaming live to a running server gets.
    @Test func recordingWhileTheServerIsDownUploadsLaterAndConvergesToTheLiveTranscript() async throws {
        let database = try TestCluster.freshDatabase()
        let port = try ServerProcess.freePort()
        let meeting = try Self.meeting(seed: 35)
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-spool-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: spool) }
        let adminKey = "resilience-admin-key-0123456789abcdef"

        var config = DeviceStreamConfig(url: "ws://127.0.0.1:\(port)/v1/listen", provider: "device", deviceID: "phone-offline")
        config.token = adminKey
        config.reconnect = ReconnectPolicy(initialDelaySeconds: 0.1, maxDelaySeconds: 0.5, maxAttempts: 1000)
        config.speed = 6
        config.volatileResults = true
        config.spoolDirectory = spool
        let states = StateLog()
        config.onState = { states.append($0) }
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let streamer = DeviceStreamer(client: client, config: config, logger: Self.logger)
        async let offline = streamer.stream(audio: meeting.audio, sampleRate: meeting.sampleRate, words: meeting.words, segments: meeting.segments)
        // The server comes up when 40 % of the meeting has been recorded (at 6× real time).
        let duration = Double(meeting.audio.count) / Double(meeting.sampleRate)
        try await Task.sleep(for: .seconds(duration * 0.4 / 6))
        #expect(states.sawOffline)
        let server = try await Blocking.run { try ServerProcess(databaseURL: database, port: port, adminKey: adminKey) }
        let report = try await offline
        #expect(report.outcome == .finalized, "\(String(describing: report.outcome)) \(report.errors)")
        #expect(report.sessionCount == 1)
        try Self.expectEveryWordOnce(meeting, databaseURL: database, conversationID: report.conversationID)

        // The same meeting streamed live to the running server: the same words, times and labels.
        var live = DeviceStreamConfig(url: "ws://127.0.0.1:\(port)/v1/listen", provider: "device", deviceID: "phone-live")
        live.token = adminKey
        live.volatileResults = true
        let liveReport = try await DeviceStreamer(client: client, config: live, logger: Self.logger)
            .stream(audio: meeting.audio, sampleRate: meeting.sampleRate, words: meeting.words, segments: meeting.segments)
        #expect(liveReport.closeCode == 1000)
        let uploaded = try Self.storedTranscript(database, report.conversationID)
        let streamedLive = try Self.storedTranscript(database, liveReport.conversationID)
        #expect(uploaded == streamedLive)
        #expect(!FileManager.default.fileExists(atPath: spool.appendingPathComponent(report.conversationID).path)) // spool removed at the end
        server.kill()
    }
}

extension ResilienceEndToEndTests {
    /// With server-side diarization (speakerkit) the voices must survive the crash too: the provider's
    /// voice profiles are stored every 10 s of audio while the session runs, so the resumed session's
    /// provider is given them, bound to their labels. Prints the word-label agreement with the true
    /// speakers with and without the crash (the figure in the issue's note).
    @Test func speakerkitVoiceProfilesAreStoredDuringTheSessionSoAResumeKnowsThem() async throws {
        var meeting = try Self.meeting(seed: 43)
        meeting.segments = [] // the server diarizes
        var agreements: [Bool: Double] = [:]
        for crash in [false, true] {
            let database = try TestCluster.freshDatabase()
            let first = try await Blocking.run { try ServerProcess(databaseURL: database) }
            var config = DeviceStreamConfig(url: "ws://127.0.0.1:\(first.port)/v1/listen", provider: "speakerkit", deviceID: "phone-sk")
            config.token = first.adminKey
            config.reconnect = ReconnectPolicy(initialDelaySeconds: 0.1, maxDelaySeconds: 1, maxAttempts: 200)
            config.speed = 4
            let conversationID = UUID().uuidString.lowercased()
            config.conversationID = conversationID
            let client = try WebSocketClient(logger: Self.logger)
            defer { client.shutdown() }
            let streamer = DeviceStreamer(client: client, config: config, logger: Self.logger)
            let input = meeting
            async let streamed = streamer.stream(audio: input.audio, sampleRate: input.sampleRate, words: input.words, segments: [])
            var second: ServerProcess?
            if crash {
                for _ in 0..<3000 where second == nil {
                    if let count = try? Self.storedWordCount(database, conversationID), count >= meeting.words.count / 2 {
                        let profiles = try PGConnection(connectionString: database)
                            .query("SELECT count(*)::int AS n FROM speaker_profiles WHERE conversation_id = $1", [conversationID]).rows[0]
                            .decode(Int.self, column: "n")
                        #expect(profiles > 0, "no voice profile stored before the crash")
                        try await Blocking.run { first.kill() }
                        try await Task.sleep(for: .milliseconds(500))
                        second = try await Blocking.run { try ServerProcess(databaseURL: database, port: first.port) }
                    } else {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
            let report = try await streamed
            #expect(report.outcome == .finalized)
            let rows = try PGConnection(connectionString: database).query(
                "SELECT text, speaker FROM words WHERE conversation_id = $1 ORDER BY start_seconds, result_id, word_index", [conversationID]).rows
            let labels = try rows.map { try $0.decode(String?.self, column: "speaker") }
            #expect(labels.count == meeting.words.count)
            let unlabelled = zip(meeting.words, labels).filter { $0.1 == nil }.map { "\($0.0.text)@\($0.0.startSeconds)" }
            #expect(unlabelled.isEmpty, "crash \(crash): words without a speaker: \(unlabelled)")
            agreements[crash] = WordSpeakerAgreement(pairs: zip(meeting.speakers, labels).map { ($0, $1) }).accuracy
            first.kill()
            second?.kill()
        }
        print("speakerkit word-label agreement, seed 43: \(agreements[false] ?? -1) live, \(agreements[true] ?? -1) with a SIGKILL at half the words")
    }
}

/// Connection states as a stream reported them.
private final class StateLog: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [ConnectionState] = []
    func append(_ state: ConnectionState) { lock.withLock { states.append(state) } }
    var sawOffline: Bool { lock.withLock { states.contains { if case .offline = $0 { true } else { false } } } }
}

/// Holds the restarted server so the test can stop it (the closure that starts it is @Sendable).
private final class Holder: @unchecked Sendable {
    var server: ServerProcess?
}
