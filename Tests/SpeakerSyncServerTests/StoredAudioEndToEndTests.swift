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
