import Foundation
import Logging
import MeetingSynth
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport

/// Issue 27's scenario with real server processes: a re-diarization answered 202, then its server
/// stopped half a second later (SIGTERM, and SIGKILL as a crash would). A new server on the same
/// database knows the job and finishes it, labelling stored; a test recording running at the stop
/// is failed with the reason instead of vanishing.
@Suite(.serialized) struct DurableJobsEndToEndTests {
    enum Stop: String, CustomStringConvertible, Sendable {
        case terminate, kill
        var description: String { rawValue }
    }

    static func start(_ database: String, plugins: URL) async throws -> ServerProcess {
        try await Blocking.run { try ServerProcess(databaseURL: database, extraArguments: ["--plugins", plugins.path]) }
    }

    static func request(_ server: ServerProcess, _ method: String, _ path: String, body: String = "", token: String? = nil) throws -> SimpleHTTPResponse {
        try SimpleHTTPClient.request(method: method, url: "http://127.0.0.1:\(server.port)\(path)", body: Array(body.utf8), token: token ?? server.adminKey)
    }

    static func token(_ server: ServerProcess, device: String) throws -> String {
        let response = try request(server, "POST", "/v1/devices/\(device)/tokens?label=test")
        return try #require((response.json() as? [String: Any])?["token"] as? String, "\(response.status) \(response.text)")
    }

    /// The job's row straight from PostgreSQL.
    static func row(_ database: String, _ id: String) throws -> (status: String, attempts: Int, server: Int?)? {
        try PGConnection(connectionString: database)
            .query("SELECT status, attempts, server_instance FROM jobs WHERE id = $1", [id]).rows.first.map {
                (try $0.decode(String.self, column: "status"), try $0.decode(Int.self, column: "attempts"), try $0.decode(Int?.self, column: "server_instance"))
            }
    }

    /// Polls `path` until its status is done or failed (bounded).
    static func finished(_ server: ServerProcess, _ path: String, token: String) async throws -> [String: Any] {
        var body: [String: Any] = [:]
        for _ in 0..<1200 {
            body = try request(server, "GET", path, token: token).json() as? [String: Any] ?? [:]
            if ["done", "failed"].contains(body["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return body
    }

    /// Streams a synthetic meeting of `seed` to `server` as `device` with its audio stored, to the
    /// end (close 1000); returns the conversation and its word count.
    static func storedMeeting(_ server: ServerProcess, token: String, device: String, seed: UInt64, turns: Int) async throws
        -> (conversationID: String, wordCount: Int) {
        let script = try MeetingScript.generate(seed: seed, speakerCount: 2, turnCount: turns)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: seed)
        var config = DeviceStreamConfig(url: "ws://127.0.0.1:\(server.port)/v1/listen", provider: "energy", deviceID: device)
        config.token = token
        config.storeAudio = true
        config.speed = 8
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let report = try await DeviceStreamer(client: client, config: config, logger: EndToEndTests.logger).stream(
            audio: meeting.audio, sampleRate: meeting.sampleRate,
            words: meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }, segments: [])
        #expect(report.closeCode == 1000)
        return (report.conversationID, meeting.words.count)
    }

    @Test(arguments: [Stop.terminate, .kill])
    func aJobAnswered202SurvivesItsServerStopping(_ stop: Stop) async throws {
        let database = try TestCluster.freshDatabase()
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: true)
        defer { try? FileManager.default.removeItem(at: plugins) }
        let first = try await Self.start(database, plugins: plugins)
        let token = try Self.token(first, device: "phone-a")
        let other = try Self.token(first, device: "phone-b")

        // A conversation with stored audio. Seed 47: not used elsewhere.
        let (conversation, wordCount) = try await Self.storedMeeting(first, token: token, device: "phone-a", seed: 47, turns: 4)

        // The faulty provider sleeps 200 ms in each 100 ms push (a 20 s job): the job is queued or running, not
        // done, when its server stops half a second later, even on a loaded machine.
        let started = try Self.request(first, "POST", "/v1/conversations/\(conversation)/diarize?provider=faulty",
                                       body: #"{"options":{"delay_ms":200}}"#, token: token)
        #expect(started.status == 202, "\(started.text)")
        let jobID = try #require((started.json() as? [String: Any])?["id"] as? String)
        #expect((started.json() as? [String: Any])?["attempts"] as? Int == 0)
        // A test recording too, at half speed: still synthesising or streaming at the stop.
        let recording = try Self.request(first, "POST", "/v1/test-recordings", body: #"{"provider":"energy","turns":10,"speed":0.5,"seed":48}"#, token: token)
        #expect(recording.status == 202, "\(recording.text)")
        let recordingID = try #require((recording.json() as? [String: Any])?["id"] as? String)
        try await Task.sleep(for: .milliseconds(500))
        let before = try #require(try Self.row(database, jobID))
        #expect(before.status != "done", "the slow job finished before the stop; the test proves nothing")
        switch stop {
        case .terminate: _ = try await Blocking.run { first.terminate() }
        case .kill: try await Blocking.run { first.kill() }
        }

        // Nothing vanished. An orderly stop put the job back in the queue with its attempt given back.
        let left = try #require(try Self.row(database, jobID), "the job's row is gone")
        switch stop {
        case .terminate:
            #expect(left.status == "queued" && left.server == nil && left.attempts == 0, "\(left)")
            #expect(try Self.row(database, recordingID)?.status == "failed")
        case .kill:
            #expect(["queued", "running"].contains(left.status), "\(left)")
            #expect(try Self.row(database, recordingID)?.status == "running")
        }

        let second = try await Self.start(database, plugins: plugins)
        defer { second.kill() }
        let job = try await Self.finished(second, "/v1/diarization-jobs/\(jobID)", token: token)
        #expect(job["status"] as? String == "done", "\(job)")
        #expect(job["progress"] as? Double == 1)
        #expect(job["error"] is NSNull)
        // A run the crash cut off counts; one the orderly stop cut off does not.
        let attempts = job["attempts"] as? Int
        #expect(attempts == (stop == .kill && left.status == "running" ? 2 : 1), "\(job)")
        let labellings = try Self.request(second, "GET", "/v1/conversations/\(conversation)/labellings", token: token).json() as? [String: Any]
        let names = (labellings?["labellings"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.contains("faulty:rediarized"), "\(names)")
        let words = try PGConnection(connectionString: database).query(
            "SELECT count(*)::int AS n FROM labelling_words WHERE conversation_id = $1 AND name = 'faulty:rediarized'", [conversation]
        ).rows[0].decode(Int.self, column: "n")
        #expect(words == wordCount)
        // Still the conversation's device's alone.
        let hidden = try Self.request(second, "GET", "/v1/diarization-jobs/\(jobID)", token: other)
        #expect(hidden.status == 404 && SecurityEndToEndTests.code(hidden) == "job_not_found")

        // The test recording cannot be resumed (its caller's credential was never stored): failed, saying why.
        let failed = try await Self.finished(second, "/v1/test-recordings/\(recordingID)", token: token)
        #expect(failed["status"] as? String == "failed")
        let reason = stop == .terminate ? "interrupted by a server shutdown" : "interrupted by a server restart"
        #expect(failed["error"] as? String == reason, "\(failed)")
        let results = failed["results"] as? [[String: Any]] ?? []
        #expect(results.count == 1 && results.allSatisfy { $0["status"] as? String == "failed" }, "\(results)")
    }
}
