import FLACCodec
import Foundation
import MeetingSynth
import PostgresClient
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `store_audio` through the real server: the audio a device sent comes back bit-exactly as WAV and
/// as FLAC, a player can ask for byte ranges, only the conversation's device can fetch it, and it is
/// deleted with its conversation.
@Suite(.serialized) struct StoredAudioEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    @Test func storedAudioRoundTripsBitExactlyAndGoesWithItsConversation() async throws {
        let server = try TestServer()
        let tokenA = try SecurityEndToEndTests.token(server, device: "phone-a")
        let tokenB = try SecurityEndToEndTests.token(server, device: "phone-b")
        // Seed 41: not used elsewhere. 25 s or so: three 10 s chunks, the last one short.
        let script = try MeetingScript.generate(seed: 41, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 41)
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        config.token = tokenA
        config.storeAudio = true
        config.speed = 8
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        // What the device sent: its 16-bit samples (SpeakerSyncKit clips and rounds at 32767).
        let sent = meeting.audio.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
        let path = "/v1/conversations/\(report.conversationID)/audio"

        let wav = try server.request("GET", path, token: tokenA)
        #expect(wav.status == 200)
        #expect(wav.headers["content-type"] == "audio/wav" && wav.headers["accept-ranges"] == "bytes")
        let decoded = try WAVFile.decode(Data(wav.body))
        #expect(decoded.sampleRate == meeting.sampleRate)
        #expect(decoded.samples.map(PCMDecoding.quantizeS16) == sent, "the stored audio is not what the device sent")

        let flac = try server.request("GET", path + "?format=flac", token: tokenA)
        #expect(flac.status == 200 && flac.headers["content-type"] == "audio/flac")
        #expect(try FLACDecoder.decode(flac.body).samples == sent)
        #expect(flac.body.count < wav.body.count)

        // A player seeking: one range, 206 with its place in the whole; past the end, 416.
        let ranged = try SimpleHTTPClient.request(method: "GET", url: server.http + path, body: [], token: tokenA, headers: [("Range", "bytes=44-1043")])
        #expect(ranged.status == 206)
        #expect(ranged.headers["content-range"] == "bytes 44-1043/\(wav.body.count)")
        #expect(ranged.body == Array(wav.body[44...1043]))
        let beyond = try SimpleHTTPClient.request(method: "GET", url: server.http + path, body: [], token: tokenA, headers: [("Range", "bytes=\(wav.body.count)-")])
        #expect(beyond.status == 416)

        // Stored in chunks on the timeline, as the schema says.
        let connection = try PGConnection(connectionString: server.connectionString)
        let counts = try connection.query("SELECT sample_count FROM audio_chunks WHERE conversation_id = $1 ORDER BY start_sample",
                                          [report.conversationID]).rows.map { try $0.decode(Int.self, column: "sample_count") }
        #expect(counts.count == (sent.count + 159_999) / 160_000 && counts.reduce(0, +) == sent.count && counts.dropLast().allSatisfy { $0 == 160_000 })

        // Another device: as if there were nothing; a conversation without store_audio: 404 saying so.
        #expect(try server.request("GET", path, token: tokenB).status == 404)
        var plain = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        plain.token = tokenA
        plain.speed = 8
        let unstored = try await server.stream(plain, audio: Array(meeting.audio.prefix(32_000)), sampleRate: meeting.sampleRate, words: [])
        let missing = try server.request("GET", "/v1/conversations/\(unstored.conversationID)/audio", token: tokenA)
        #expect(missing.status == 404 && SecurityEndToEndTests.code(missing) == "audio_not_stored")

        // Deleted with its conversation.
        #expect(try server.request("DELETE", "/v1/conversations/\(report.conversationID)", token: tokenA).status == 200)
        let left = try connection.query("SELECT count(*)::bigint AS n FROM audio_chunks WHERE conversation_id = $1", [report.conversationID])
            .rows[0].decode(Int.self, column: "n")
        #expect(left == 0)
    }
}

/// Issue 28: one device cannot fill the disk with `store_audio`. Past its quota a session goes on
/// without storing audio (non-fatal `audio_not_stored`, told once), its words still stored; the next
/// session of that device is told at once; another device is not affected.
@Suite(.serialized) struct StoredAudioQuotaEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    private func storedSeconds(_ server: TestServer, _ conversationID: String) throws -> Double {
        try PGConnection(connectionString: server.connectionString)
            .query("SELECT coalesce(sum(sample_count::float8 / sample_rate), 0) AS s FROM audio_chunks WHERE conversation_id = $1", [conversationID])
            .rows[0].decode(Double.self, column: "s")
    }

    @Test func aDevicePastItsStoredAudioQuotaGoesOnWithoutStoringAudio() async throws {
        let server = try TestServer { $0.sessionLimits.storedAudioQuotaSecondsPerDevice = 10 }
        let tokenA = try SecurityEndToEndTests.token(server, device: "phone-a")
        let tokenB = try SecurityEndToEndTests.token(server, device: "phone-b")
        // Seed 53: not used elsewhere; about 25 s, more than the 10 s quota (one 10 s chunk fits).
        let meeting = try MeetingSynthesizer().synthesize(try MeetingScript.generate(seed: 53, speakerCount: 2, turnCount: 6), seed: 53)
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        #expect(Double(meeting.audio.count) / Double(meeting.sampleRate) > 20)
        func config(_ device: String, _ token: String) -> DeviceStreamConfig {
            var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: device)
            config.token = token
            config.storeAudio = true
            config.speed = 8
            return config
        }

        let first = try await server.stream(config("phone-a", tokenA), audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(first.closeCode == 1000)
        #expect(first.errors.filter { $0.code == "audio_not_stored" }.count == 1, "\(first.errors)")
        let kept = try storedSeconds(server, first.conversationID)
        #expect(kept > 0 && kept <= 10, "stored \(kept) s")
        let stored = try server.json("/v1/conversations/\(first.conversationID)").body["word_count"] as? Int
        #expect(stored == words.count, "the words are stored whatever happens to the audio")

        let second = try await server.stream(config("phone-a", tokenA), audio: Array(meeting.audio.prefix(5 * meeting.sampleRate)),
                                             sampleRate: meeting.sampleRate, words: [])
        #expect(second.closeCode == 1000)
        #expect(second.errors.contains { $0.code == "audio_not_stored" && $0.message.contains("quota") })
        #expect(try storedSeconds(server, second.conversationID) == 0)

        let other = try await server.stream(config("phone-b", tokenB), audio: Array(meeting.audio.prefix(8 * meeting.sampleRate)),
                                            sampleRate: meeting.sampleRate, words: [])
        #expect(other.closeCode == 1000 && other.errors.isEmpty, "\(other.errors)")
        #expect(abs(try storedSeconds(server, other.conversationID) - 8) < 0.01)
    }
}

/// A conversation holds a bounded number of words (a live session keeps them all in memory): past the
/// limit a words message is refused whole with the non-fatal `too_many_words`, and the session goes on.
@Suite(.serialized) struct ConversationWordLimitEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    @Test func aConversationPastItsWordLimitRefusesMoreWords() async throws {
        let server = try TestServer { $0.sessionLimits.maxConversationWords = 30 }
        let meeting = try MeetingSynthesizer().synthesize(try MeetingScript.generate(seed: 53, speakerCount: 2, turnCount: 6), seed: 53)
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        #expect(words.count > 40)
        var config = DeviceStreamConfig(url: server.ws, provider: "energy", deviceID: "phone-a")
        config.token = server.adminKey
        config.speed = 8
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        #expect(report.errors.contains { $0.code == "too_many_words" && $0.message.contains("limit of 30 words") }, "\(report.errors)")
        let stored = try server.json("/v1/conversations/\(report.conversationID)").body["word_count"] as? Int ?? -1
        #expect(stored > 0 && stored <= 30, "stored \(stored)")
    }
}
