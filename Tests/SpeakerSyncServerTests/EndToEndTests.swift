import Foundation
import Logging
import MeetingSynth
import PostgresClient
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// The real server (libwebsockets on a loopback port, PostgreSQL, dlopen'd plugins) driven by a
/// device-like client over a real WebSocket.
@Suite(.serialized) struct EndToEndTests {
    static var logger: Logger {
        var logger = Logger(label: "e2e")
        logger.logLevel = .warning
        return logger
    }

    /// A server on a free loopback port with a database of its own.
    final class TestServer {
        let app: SpeakerSyncApplication
        let port: Int
        let connectionString: String
        /// The admin key every helper below presents (SPEAKERSYNC_ADMIN_KEY's place in tests).
        static let adminKey = "test-admin-key-0123456789abcdef0123456789abcdef"
        var adminKey: String { Self.adminKey }
        /// The upgrade header that authenticates a raw client as the admin.
        var authorization: [(String, String)] { [("authorization", "Bearer \(adminKey)")] }

        /// `configure` adjusts the config (plugins folder, isolation) before the server starts;
        /// `database` reuses a database (a server started again after another).
        init(database: String? = nil, configure: (inout ServerConfig) -> Void = { _ in }) throws {
            connectionString = try database ?? TestCluster.freshDatabase()
            var config = ServerConfig.default
            // Tests share two cores with CPU-heavy suites; a starved client must not look idle.
            config.session.idleIntervalSeconds = 600
            config.port = 0
            config.databaseURL = connectionString
            config.access.environmentAdminKey = Self.adminKey
            // Tests poll routes every 10 ms; the rate limit has tests of its own (SecurityEndToEndTests).
            config.access.requestsPerSecond = 0
            configure(&config)
            app = SpeakerSyncApplication(config: config, logger: EndToEndTests.logger)
            port = try app.start()
        }

        deinit { app.shutdown() }

        var ws: String { "ws://127.0.0.1:\(port)/v1/listen" }
        var http: String { "http://127.0.0.1:\(port)" }

        /// Streams as the admin unless `config.token` names another credential.
        func stream(_ config: DeviceStreamConfig, audio: [Float], sampleRate: Int, words: [DeviceWord], segments: [DeviceSegment] = []) async throws -> StreamReport {
            var config = config
            if config.token == nil { config.token = adminKey }
            let client = try WebSocketClient(logger: EndToEndTests.logger)
            defer { client.shutdown() }
            return try await DeviceStreamer(client: client, config: config, logger: EndToEndTests.logger)
                .stream(audio: audio, sampleRate: sampleRate, words: words, segments: segments)
        }

        /// GET as the admin (or with `token`).
        func json(_ path: String, token: String? = nil) throws -> (status: Int, body: [String: Any]) {
            let response = try SimpleHTTPClient.get(http + path, token: token ?? adminKey)
            return (response.status, response.json() as? [String: Any] ?? [:])
        }

        /// Any request as the admin (or with `token`).
        func request(_ method: String, _ path: String, body: [UInt8] = [], contentType: String = "application/json",
                     token: String? = nil) throws -> SimpleHTTPResponse {
            try SimpleHTTPClient.request(method: method, url: http + path, body: body, contentType: contentType, token: token ?? adminKey)
        }

        /// The stored words as (text, start, speaker, utterance) in time order, straight from PostgreSQL.
        func storedWords(_ conversationID: String) throws -> [(text: String, start: Double, speaker: String?, utterance: Int64)] {
            let connection = try PGConnection(connectionString: connectionString)
            let result = try connection.query(
                "SELECT text, start_seconds, speaker, utterance_id FROM words WHERE conversation_id = $1 ORDER BY start_seconds, result_id, word_index",
                [conversationID]
            )
            return try result.rows.map {
                (try $0.decode(String.self, column: "text"), try $0.decode(Double.self, column: "start_seconds"),
                 try $0.decode(String?.self, column: "speaker"), try $0.decode(Int64.self, column: "utterance_id"))
            }
        }
    }

    /// Words laid on the reference timeline of a real recording: a 0.3 s word every 0.45 s inside each
    /// reference turn. The recording has no word transcript; what matters for the merge is where the
    /// words lie, and each word's true speaker is the reference speaker covering its midpoint.
    static func referenceWords(_ turns: [DeviceSegment]) -> [(word: DeviceWord, speakers: Set<String>)] {
        var words: [(DeviceWord, Set<String>)] = []
        var index = 0
        for turn in turns {
            var start = turn.startSeconds + 0.05
            while start + 0.3 <= turn.endSeconds {
                let mid = start + 0.15
                let active = Set(turns.filter { $0.startSeconds <= mid && mid < $0.endSeconds }.map(\.speaker))
                words.append((DeviceWord(text: "w\(index)", startSeconds: start, endSeconds: start + 0.3), active))
                index += 1
                start += 0.45
            }
        }
        return words.sorted { $0.0.startSeconds < $1.0.startSeconds }
    }

    @Test func sampleRecordingWithDeviceTurnsAgreesLiveHTTPAndPostgres() async throws {
        guard let wav = TestData.file("sample/sample.wav"), let rttm = TestData.file("sample/sample.rttm") else {
            Issue.record("shared/data/sample is missing; set SPEAKERSYNC_TEST_DATA")
            return
        }
        let server = try TestServer()
        let audio = try WAVFile.read(contentsOf: wav)
        let turns = try DeviceInput.readRTTM(path: rttm.path)
        let words = Self.referenceWords(turns)
        var config = DeviceStreamConfig(url: server.ws, provider: "device", deviceID: "phone-sample")
        config.volatileResults = true
        let report = try await server.stream(config, audio: audio.samples, sampleRate: audio.sampleRate, words: words.map(\.word), segments: turns)
        #expect(report.closeCode == 1000)
        #expect(report.errors.isEmpty, "\(report.errors)")
        // The wait for the final labels was timed (the sessions bench reports it).
        #expect((report.finalizeSeconds ?? -1) > 0)

        // Every word came back once, labelled, with a speaker that was speaking at that time.
        let live = report.transcript.words
        #expect(live.count == words.count)
        #expect(live.allSatisfy { $0.speaker != nil && $0.stored })
        let truthByText = Dictionary(uniqueKeysWithValues: words.map { ($0.word.text, $0.speakers) })
        let single = live.filter { truthByText[$0.text]?.count == 1 }
        let agreement = WordSpeakerAgreement(pairs: single.map { (truthByText[$0.text]!.first!, $0.speaker) })
        #expect(agreement.correctCount == single.count, "\(agreement)")
        let mapping = agreement.mapping
        let overlapped = live.filter { (truthByText[$0.text]?.count ?? 0) > 1 }
        #expect(overlapped.allSatisfy { word in word.speaker.flatMap { mapping[$0] }.map { truthByText[word.text]!.contains($0) } ?? false })
        #expect(Set(live.compactMap(\.speaker)).count == 2)

        // The HTTP transcript and the rows in PostgreSQL say exactly what the device was told.
        let (status, http) = try server.json("/v1/conversations/\(report.conversationID)/transcript?format=json")
        #expect(status == 200)
        let httpUtterances = http["utterances"] as? [[String: Any]] ?? []
        #expect(httpUtterances.map { $0["id"] as? String } == report.transcript.utterances.map(\.id))
        #expect(httpUtterances.map { $0["speaker"] as? String } == report.transcript.utterances.map(\.speaker))
        #expect(httpUtterances.map { $0["text"] as? String } == report.transcript.utterances.map(\.text))
        let rows = try server.storedWords(report.conversationID)
        #expect(rows.map(\.text) == live.map(\.text))
        #expect(rows.map(\.speaker) == live.map(\.speaker))
        let liveUtteranceOfWord = Dictionary(uniqueKeysWithValues: report.transcript.utterances.flatMap { u in u.words.map { ($0.text, u.id) } })
        #expect(rows.allSatisfy { "u\($0.utterance)" == liveUtteranceOfWord[$0.text] })

        let (_, conversation) = try server.json("/v1/conversations/\(report.conversationID)")
        #expect(conversation["status"] as? String == "finalized")
        #expect(conversation["provider"] as? String == "device")
        #expect((conversation["audio_seconds"] as? Double).map { abs($0 - 30) < 0.01 } == true)
        #expect(conversation["unlabelled_word_count"] as? Int == 0)
    }

    @Test func pluginProviderIsLoadedWithDlopenAndLabelsASyntheticMeeting() async throws {
        let server = try TestServer()
        let (_, providers) = try server.json("/v1/providers")
        let energy = (providers["providers"] as? [[String: Any]])?.first { $0["id"] as? String == "energy" }
        #expect((energy?["path"] as? String)?.hasSuffix("libspeakersync-energy.so") == true)

        let script = try MeetingScript.generate(seed: 5, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 5)
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-energy")
        config.volatileResults = true
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        let live = report.transcript.words
        #expect(live.count == meeting.words.count)
        let pairs = zip(meeting.words, live).map { (truth: $0.speaker, hypothesis: $1.speaker) }
        let agreement = WordSpeakerAgreement(pairs: pairs)
        #expect(agreement.unlabelledCount == 0)
        #expect(agreement.accuracy >= 0.9, "\(agreement)")
        let rows = try server.storedWords(report.conversationID)
        #expect(rows.map(\.speaker) == live.map(\.speaker))
    }

    @Test func reconnectContinuesOneConversationWithoutLosingWords() async throws {
        let server = try TestServer()
        let script = try MeetingScript.generate(seed: 9, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 9)
        let cut = meeting.audio.count / 2
        let cutSeconds = Double(cut) / Double(meeting.sampleRate)
        let allWords = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let segments = meeting.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }

        var first = DeviceStreamConfig(url: server.ws, provider: "device", deviceID: "phone-r")
        first.sendFinalize = false
        let firstReport = try await server.stream(
            first, audio: Array(meeting.audio[..<cut]), sampleRate: meeting.sampleRate,
            words: allWords.filter { $0.endSeconds <= cutSeconds },
            segments: segments.filter { $0.endSeconds <= cutSeconds }
        )
        // The server stores the interrupted session after it notices the disconnect: wait (bounded) for it.
        var interrupted: [String: Any] = [:]
        for _ in 0 ..< 1200 {
            interrupted = try server.json("/v1/conversations/\(firstReport.conversationID)").1
            if interrupted["status"] as? String == "interrupted" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(interrupted["status"] as? String == "interrupted")

        var second = DeviceStreamConfig(url: server.ws, provider: "device", deviceID: "phone-r")
        second.conversationID = firstReport.conversationID
        second.audioOffsetSeconds = cutSeconds
        let secondReport = try await server.stream(
            second, audio: Array(meeting.audio[cut...]), sampleRate: meeting.sampleRate,
            words: allWords.filter { $0.endSeconds > cutSeconds },
            segments: segments.filter { $0.endSeconds > cutSeconds }
        )
        #expect(secondReport.conversationID == firstReport.conversationID)
        #expect(secondReport.closeCode == 1000)
        let live = secondReport.transcript.words
        #expect(live.map(\.text) == meeting.words.map(\.text))
        // Device speaker keys map to the same labels before and after the reconnect.
        let agreement = WordSpeakerAgreement(pairs: zip(meeting.words, live).map { ($0.speaker, $1.speaker) })
        #expect(agreement.accuracy == 1, "\(agreement)")
        let rows = try server.storedWords(firstReport.conversationID)
        #expect(rows.count == meeting.words.count)
        let (_, list) = try server.json("/v1/conversations?device_id=phone-r")
        #expect((list["conversations"] as? [[String: Any]])?.count == 1)
    }

    @Test func badInputGetsSpecificErrorsAndTheServerCarriesOn() async throws {
        let server = try TestServer()
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        func next() async -> [String: Any]? { await events.nextJSON() }
        connection.send(.binary([0, 0, 0, 0]))
        #expect(await next()?["code"] as? String == "audio_before_start")
        connection.send(.text("{not json"))
        #expect(await next()?["code"] as? String == "malformed_json")
        connection.send(.text(#"{"type":"shout"}"#))
        #expect(await next()?["code"] as? String == "unknown_type")
        connection.send(.text(#"{"type":"start","device_id":"d","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#))
        #expect(await next()?["type"] as? String == "session")
        connection.send(.text(#"{"type":"words","result_id":"r1","final":true,"words":[{"text":"x","start":2,"end":1}]}"#))
        #expect(await next()?["code"] as? String == "invalid_timestamp")
        connection.send(.text(#"{"type":"words","result_id":"r1","final":true,"words":[{"text":"x","start":-1,"end":1}]}"#))
        #expect(await next()?["code"] as? String == "invalid_timestamp")
        // The session survived all of that: it still stores and labels words.
        connection.send(.text(#"{"type":"segments","segments":[{"speaker":"A","start":0,"end":1}]}"#))
        connection.send(.text(#"{"type":"words","result_id":"r2","final":true,"words":[{"text":"fine","start":0.2,"end":0.5}]}"#))
        var sawWord = false
        while let message = await next() {
            if message["type"] as? String == "transcript",
               (message["upserted"] as? [[String: Any]])?.contains(where: { ($0["text"] as? String) == "fine" && ($0["speaker"] as? String) == "Speaker 1" }) == true {
                sawWord = true
                break
            }
        }
        #expect(sawWord)
        connection.send(.text(#"{"type":"start","device_id":"d","provider":"nope","sample_rate":16000,"encoding":"pcm_s16le"}"#))
        #expect(await next()?["code"] as? String == "already_started")
        // An oversized frame is fatal by design (docs/protocol.md): error frame, then close 1009.
        connection.send(.binary([UInt8](repeating: 0, count: 5 << 20)))
        let tooLarge = await next()
        #expect(tooLarge?["code"] as? String == "frame_too_large")
        #expect(tooLarge?["fatal"] as? Bool == true)
        #expect(await events.closeCode() == 1009)

        // A second connection with an unsupported sample rate is refused at start and closed.
        let refused = EventReader(try client.connect(url: server.ws + "?device_id=d&provider=device&sample_rate=96000&encoding=pcm_s16le", headers: server.authorization).events)
        #expect(await refused.nextJSON()?["code"] as? String == "unsupported_sample_rate")
        #expect(await refused.closeCode() == 1003)

        // A third whose options the dlopen'd plugin refuses: the client's mistake, close 1007.
        let typo = try client.connect(url: server.ws, headers: server.authorization)
        let typoEvents = EventReader(typo.events)
        typo.send(.text(#"{"type":"start","device_id":"d","provider":"energy","sample_rate":16000,"encoding":"pcm_s16le","options":{"treshold":2}}"#))
        let typoError = await typoEvents.nextJSON()
        #expect(typoError?["code"] as? String == "invalid_options")
        #expect((typoError?["message"] as? String)?.contains("unknown option 'treshold'") == true, "\(String(describing: typoError))")
        #expect(await typoEvents.closeCode() == 1007)
        #expect(try server.json("/healthz").status == 200)
    }

    @Test func httpRoutesPageFilterAndRenderEveryFormat() async throws {
        let server = try TestServer()
        let script = try MeetingScript.generate(seed: 2, speakerCount: 2, turnCount: 4)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 2)
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let segments = meeting.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        var ids: [String] = []
        for index in 0..<3 {
            let config = DeviceStreamConfig(url: server.ws, provider: "device", deviceID: index < 2 ? "phone-a" : "phone-b")
            ids.append(try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words, segments: segments).conversationID)
        }
        let (_, page1) = try server.json("/v1/conversations?device_id=phone-a&limit=1")
        let first = page1["conversations"] as? [[String: Any]] ?? []
        #expect(first.count == 1)
        let cursor = try #require(page1["next_cursor"] as? String)
        let (_, page2) = try server.json("/v1/conversations?device_id=phone-a&limit=1&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)")
        let second = page2["conversations"] as? [[String: Any]] ?? []
        #expect(second.count == 1)
        #expect(Set((first + second).compactMap { $0["id"] as? String }) == Set(ids.prefix(2)))
        #expect(page2["next_cursor"] is NSNull)

        let text = try server.request("GET", "/v1/conversations/\(ids[2])/transcript?format=text")
        #expect(text.status == 200)
        #expect(text.text.hasPrefix("Speaker 1: "))
        #expect(text.text.split(separator: "\n").count == script.turns.count)
        let srt = try server.request("GET", "/v1/conversations/\(ids[2])/transcript?format=srt").text
        #expect(srt.hasPrefix("1\n00:00:"))
        let vtt = try server.request("GET", "/v1/conversations/\(ids[2])/transcript?format=vtt").text
        #expect(vtt.hasPrefix("WEBVTT"))
        let rttm = try server.request("GET", "/v1/conversations/\(ids[2])/transcript?format=rttm").text
        #expect(rttm.split(separator: "\n").allSatisfy { $0.hasPrefix("SPEAKER \(ids[2]) 1 ") })

        let missing = try server.json("/v1/conversations/nope")
        #expect(missing.status == 404)
        #expect((missing.body["error"] as? [String: Any])?["code"] as? String == "conversation_not_found")
        let badFormat = try server.json("/v1/conversations/\(ids[0])/transcript?format=doc")
        #expect(badFormat.status == 400)
        let badLimit = try server.json("/v1/conversations?limit=0")
        #expect(badLimit.status == 400)
    }

    @Test func withoutADatabaseURLTheServerRunsAndStopsItsOwnCluster() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-embedded-\(UUID().uuidString.prefix(8))")
        let keyFile = AccessConfig.defaultAdminKeyFile(dataDirectory: folder.path)
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(atPath: keyFile)
        }
        var config = ServerConfig.default
        config.access.environmentAdminKey = nil
        // Tests share two cores with CPU-heavy suites; a starved client must not look idle.
        config.session.idleIntervalSeconds = 600
        config.port = 0
        config.databaseURL = nil
        config.dataDirectory = folder.path
        let app = SpeakerSyncApplication(config: config, logger: Self.logger)
        let port = try app.start()
        let health = try SimpleHTTPClient.get("http://127.0.0.1:\(port)/healthz")
        #expect(health.status == 200)
        // The generated admin key is beside the data folder (not in the cluster's folder, which
        // base backups copy), and it works.
        #expect(keyFile == folder.path + ".admin-key")
        let key = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try SimpleHTTPClient.get("http://127.0.0.1:\(port)/v1/conversations", token: key).status == 200)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("admin-key").path))
        let pidFile = folder.appendingPathComponent("postmaster.pid").path
        #expect(FileManager.default.fileExists(atPath: pidFile))
        app.shutdown()
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }
}

/// Reads one client connection's events through a single iterator.
final class EventReader: @unchecked Sendable {
    private var iterator: AsyncStream<WebSocketClientEvent>.Iterator

    init(_ events: AsyncStream<WebSocketClientEvent>) { iterator = events.makeAsyncIterator() }

    /// Reads to the end of the connection and returns its close code.
    func closeCode() async -> UInt16? {
        while let event = await iterator.next() {
            if case .disconnected(let code, _) = event { return code }
        }
        return nil
    }

    /// The next text message as JSON; nil once the connection is gone.
    func nextJSON() async -> [String: Any]? {
        while let event = await iterator.next() {
            switch event {
            case .message(.text(let text)): return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            case .disconnected: return nil
            default: continue
            }
        }
        return nil
    }
}
