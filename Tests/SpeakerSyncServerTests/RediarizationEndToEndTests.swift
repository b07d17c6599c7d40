import Foundation
import MeetingSynth
import PostgresClient
import SpeakerSyncStore
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// Re-diarization through the real server: stored audio run again through a provider in its worker,
/// stored as another labelling of the same words, comparable with the live one.
@Suite(.serialized) struct RediarizationEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// Polls a job until it is done or failed (bounded).
    static func finished(_ server: TestServer, _ id: String, token: String) async throws -> [String: Any] {
        var job: [String: Any] = [:]
        for _ in 0..<1200 {
            job = try server.json("/v1/diarization-jobs/\(id)", token: token).body
            if ["done", "failed"].contains(job["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return job
    }

    /// energy is deterministic: its re-diarization of the stored audio gives the words exactly the
    /// live session's speakers (DER 0 and every word the same speaker, the labels themselves equal);
    /// speakerkit's re-diarization of the same audio is stored beside it.
    @Test func reDiarizingWithTheSameDeterministicProviderReproducesTheLiveLabels() async throws {
        let server = try TestServer()
        let token = try SecurityEndToEndTests.token(server, device: "phone-a")
        let other = try SecurityEndToEndTests.token(server, device: "phone-b")
        // Seed 43: not used elsewhere.
        let script = try MeetingScript.generate(seed: 43, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 43)
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        config.token = token
        config.storeAudio = true
        config.speed = 8
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        let id = report.conversationID

        let started = try server.request("POST", "/v1/conversations/\(id)/diarize?provider=energy", token: token)
        #expect(started.status == 202, "\(started.text)")
        let jobID = try #require((started.json() as? [String: Any])?["id"] as? String)
        #expect(started.headers["location"] == "/v1/diarization-jobs/\(jobID)")
        #expect(try server.request("GET", "/v1/diarization-jobs/\(jobID)", token: other).status == 404)
        let job = try await Self.finished(server, jobID, token: token)
        #expect(job["status"] as? String == "done", "\(job)")
        #expect(job["progress"] as? Double == 1)
        #expect((job["real_time_factor"] as? Double ?? 0) > 0)

        let (_, comparison) = try server.json("/v1/conversations/\(id)/compare?providers=energy,energy:rediarized", token: token)
        let pair = try #require((comparison["pairs"] as? [[String: Any]])?.first)
        #expect(pair["der_no_collar"] as? Double == 0, "\(pair)")
        #expect(pair["word_agreement"] as? Double == 1, "\(pair)")
        let live = try ShadowProvidersEndToEndTests.labelledWords(server, id, "energy")
        let again = try ShadowProvidersEndToEndTests.labelledWords(server, id, "energy:rediarized")
        #expect(again.map(\.speaker) == live.map(\.speaker))
        #expect(live.count == meeting.words.count)

        // Another provider on the same audio, stored beside it.
        let second = try server.request("POST", "/v1/conversations/\(id)/diarize?provider=speakerkit", token: token)
        let secondID = try #require((second.json() as? [String: Any])?["id"] as? String)
        #expect(try await Self.finished(server, secondID, token: token)["status"] as? String == "done")
        let names = (try server.json("/v1/conversations/\(id)/labellings", token: token).body["labellings"] as? [[String: Any]] ?? [])
            .map { "\($0["name"] ?? "")/\($0["source"] ?? "")" }
        #expect(names == ["energy/live", "energy:rediarized/rediarized", "speakerkit:rediarized/rediarized"])
        #expect((try server.json("/v1/diarization-jobs", token: token).body["jobs"] as? [Any])?.count == 2)
        #expect((try server.json("/v1/diarization-jobs", token: other).body["jobs"] as? [Any])?.count == 0)
    }

    /// What cannot be re-diarized is refused at once with what is wrong.
    @Test func reDiarizationRefusesWhatItCannotDo() async throws {
        let server = try TestServer()
        let token = try SecurityEndToEndTests.token(server, device: "phone-a")
        let other = try SecurityEndToEndTests.token(server, device: "phone-b")
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        config.token = token
        config.speed = 8
        let script = try MeetingScript.generate(seed: 43, speakerCount: 2, turnCount: 2)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 43)
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: [])
        let path = "/v1/conversations/\(report.conversationID)/diarize"
        let cases: [(String, String?, Int, String)] = [
            (path + "?provider=energy", token, 409, "audio_not_stored"),
            (path + "?provider=nemo-msdd", token, 400, "unknown_provider"),
            (path + "?provider=device", token, 400, "invalid_parameter"),
            (path, token, 400, "invalid_parameter"),
            (path + "?provider=energy", other, 404, "conversation_not_found"),
        ]
        for (url, credential, status, code) in cases {
            let response = try server.request("POST", url, token: credential)
            #expect(response.status == status && SecurityEndToEndTests.code(response) == code, "\(url): \(response.status) \(response.text)")
        }
        #expect(try server.request("GET", "/v1/diarization-jobs/nope", token: token).status == 404)
    }

    /// One device cannot take the server's whole re-diarization pool: past its share it gets 429
    /// `device_share_used`, while the admin (and so other devices, JobQueueTests) still gets in.
    @Test func aDeviceThatUsedItsJobShareIsRefusedAndTheAdminIsNot() async throws {
        let server = try TestServer()
        let token = try SecurityEndToEndTests.token(server, device: "phone-a")
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        config.token = token
        config.storeAudio = true
        config.speed = 8
        let script = try MeetingScript.generate(seed: 43, speakerCount: 2, turnCount: 2)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 43)
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: [])
        #expect(report.closeCode == 1000)
        // phone-a's share (one) is taken by a job running on a live server of its own: this
        // connection holds that server's lease lock, so recovery leaves the row alone.
        let otherServer = try PGConnection(connectionString: server.connectionString)
        try otherServer.execute("SELECT pg_advisory_lock($1, $2)", [ServerLease.lockClass, Int32(777_777)])
        try otherServer.execute("""
            INSERT INTO jobs (id, kind, device_id, conversation_id, provider, request, status, attempts, server_instance, started_at, heartbeat_at)
            VALUES ('held-by-a', 'rediarization', 'phone-a', $1, 'energy', '{}', 'running', 1, 777777, now(), now())
            """, [report.conversationID])
        let path = "/v1/conversations/\(report.conversationID)/diarize?provider=energy"
        let refused = try server.request("POST", path, token: token)
        #expect(refused.status == 429 && SecurityEndToEndTests.code(refused) == "device_share_used", "\(refused.status) \(refused.text)")
        let admitted = try server.request("POST", path, token: server.adminKey)
        #expect(admitted.status == 202, "\(admitted.text)")
        let jobID = try #require((admitted.json() as? [String: Any])?["id"] as? String)
        #expect(try await Self.finished(server, jobID, token: token)["status"] as? String == "done")
        // The held job done, phone-a's share is free again.
        try otherServer.execute("UPDATE jobs SET status = 'done', finished_at = now() WHERE id = 'held-by-a'")
        let again = try server.request("POST", path, token: token)
        #expect(again.status == 202, "\(again.text)")
    }
}
