import Foundation
import MeetingSynth
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// `sherpa-onnx` as a device meets it: a server with its providers in worker processes, configured by a
/// provider config file (the stand-in models), a real WebSocket stream with words, PostgreSQL. The
/// offline pass's turns replace the live ones at finalize, and what the device was told last is what
/// is stored. Without models the provider is listed unavailable and a session on it is refused.
@Suite(.serialized) struct SherpaOnnxEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static func server(configured: Bool) throws -> (TestServer, cleanup: () -> Void) {
        let plugins = try TestPlugins.folder(copying: ["speakersync-sherpa-onnx"], faulty: false)
        var configFile: URL?
        if configured {
            let models = try TestModels.sherpaOnnx()
            let file = plugins.appendingPathComponent("providers.json")
            try #"{"sherpa-onnx": \#(SherpaOnnxPluginTests.section(models: models))}"#.write(to: file, atomically: true, encoding: .utf8)
            configFile = file
        }
        let server = try TestServer { config in
            config.pluginsDirectory = plugins.path
            config.providerConfigPath = configFile?.path
            config.providerIsolation.niceIncrement = 0
        }
        return (server, { try? FileManager.default.removeItem(at: plugins) })
    }

    @Test func aStreamedMeetingEndsWithTheOfflinePassesTurnsAndEveryWordLabelledAndStored() async throws {
        let (server, cleanup) = try Self.server(configured: true)
        defer { cleanup() }
        let (status, listed) = try server.json("/v1/providers")
        #expect(status == 200)
        let providers = listed["providers"] as? [[String: Any]] ?? []
        let sherpa = try #require(providers.first { $0["id"] as? String == "sherpa-onnx" })
        #expect(sherpa["available"] as? Bool == true)
        #expect((sherpa["requirements"] as? String)?.contains("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL") == true)
        let broken = try #require(providers.first { $0["id"] as? String == "sherpa-onnx.broken" })
        #expect(broken["available"] as? Bool == false)
        #expect((broken["unavailable_reason"] as? String)?.hasPrefix("cannot load its models: ") == true)

        let meeting = SherpaOnnxPluginTests.meeting
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        var config = DeviceStreamConfig(url: server.ws, provider: "sherpa-onnx", deviceID: "phone-sherpa")
        // The stand-in segmentation finds one speaker; prefer_live_count 0 makes the offline pass revise anyway.
        config.optionsJSON = #"{"max_speakers": 4, "prefer_live_count": 0}"#
        config.speed = 4
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        #expect(report.errors.isEmpty, "\(report.errors)")
        let live = report.transcript.words
        #expect(live.count == words.count)
        #expect(live.allSatisfy { $0.speaker != nil }, "every word has a speaker")

        // Stored: every word, with the speaker the device was told last.
        let rows = try server.storedWords(report.conversationID)
        #expect(rows.map(\.text) == live.map(\.text))
        #expect(rows.map(\.speaker) == live.map(\.speaker))
        // The provider's stored turns are the offline pass's (ids from 2^62), none of the live ones left.
        let turns = try PGConnection(connectionString: server.connectionString).query(
            "SELECT turn_id FROM speaker_turns WHERE conversation_id = $1 AND provider = 'sherpa-onnx'", [report.conversationID]).rows
            .map { try $0.decode(String.self, column: "turn_id") }
        #expect(!turns.isEmpty)
        for turn in turns {
            let id = UInt64(turn.split(separator: ":").last.map(String.init) ?? "") ?? 0
            #expect(id >= 1 << 62, "\(turn) is a live turn left after finalize")
        }
        let (_, summary) = try server.json("/v1/conversations/\(report.conversationID)")
        #expect(summary["unlabelled_word_count"] as? Int == 0)
    }

    @Test func withoutModelsItIsListedUnavailableAndASessionOnItIsRefused() async throws {
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL")
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL")
        let (server, cleanup) = try Self.server(configured: false)
        defer { cleanup() }
        let providers = try server.json("/v1/providers").body["providers"] as? [[String: Any]] ?? []
        let sherpa = try #require(providers.first { $0["id"] as? String == "sherpa-onnx" })
        #expect(sherpa["available"] as? Bool == false)
        let reason = sherpa["unavailable_reason"] as? String ?? ""
        #expect(reason.hasPrefix("no models configured: set SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL"), "\(reason)")

        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        connection.send(.text(#"{"type":"start","device_id":"phone-none","provider":"sherpa-onnx","sample_rate":16000,"encoding":"pcm_s16le"}"#))
        let refusal = await events.nextJSON()
        #expect(refusal?["code"] as? String == "provider_unavailable")
        #expect((refusal?["message"] as? String)?.contains("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL") == true)
        #expect(await events.closeCode() == 4001)
        #expect(try server.json("/healthz").status == 200)
    }
}
