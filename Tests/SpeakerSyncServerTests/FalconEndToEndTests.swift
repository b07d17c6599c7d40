import Foundation
import MeetingSynth
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// `falcon` as a device meets it, through worker processes, WebSocket and PostgreSQL: on the test double
/// a streamed meeting ends with every word labelled and stored as the device was told; a Falcon that
/// fails mid-session fails that session with Picovoice's message; the real library on this machine
/// (no activation possible) is listed unavailable with its message and refuses sessions with close 4001.
/// The AccessKey appears in none of it.
@Suite(.serialized) struct FalconEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static func server(section: String) throws -> (TestServer, cleanup: () -> Void) {
        let plugins = try TestPlugins.folder(copying: ["speakersync-falcon"], faulty: false)
        let file = plugins.appendingPathComponent("providers.json")
        try #"{"falcon": \#(section)}"#.write(to: file, atomically: true, encoding: .utf8)
        let server = try TestServer { config in
            config.pluginsDirectory = plugins.path
            config.providerConfigPath = file.path
            config.providerIsolation.niceIncrement = 0
        }
        return (server, { try? FileManager.default.removeItem(at: plugins) })
    }

    static func providersText(_ server: TestServer) throws -> String {
        String(decoding: try server.request("GET", "/v1/providers").body, as: UTF8.self)
    }

    @Test func aStreamedMeetingEndsWithEveryWordLabelledAndStored() async throws {
        let (server, cleanup) = try Self.server(section: try FalconPluginTests.section(key: "double-ok"))
        defer { cleanup() }
        let listing = try Self.providersText(server)
        #expect(!listing.contains("double-ok"), "the key is not listed")
        let providers = try server.json("/v1/providers").body["providers"] as? [[String: Any]] ?? []
        #expect(providers.first { $0["id"] as? String == "falcon" }?["available"] as? Bool == true)

        let meeting = SherpaOnnxPluginTests.meeting
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        var config = DeviceStreamConfig(url: server.ws, provider: "falcon", deviceID: "phone-falcon")
        config.optionsJSON = #"{"window_seconds": 20, "step_seconds": 3}"#
        config.speed = 4
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.transcript.words.count == words.count)
        #expect(report.transcript.words.allSatisfy { $0.speaker != nil })
        let rows = try server.storedWords(report.conversationID)
        #expect(rows.map(\.speaker) == report.transcript.words.map(\.speaker))
        let (_, summary) = try server.json("/v1/conversations/\(report.conversationID)")
        #expect(summary["unlabelled_word_count"] as? Int == 0)
    }

    @Test func aFalconThatFailsMidSessionFailsThatSessionWithPicovoicesMessage() async throws {
        // The double fails its third process call: the third live window, at 6 s with a 2 s step.
        let (server, cleanup) = try Self.server(section: try FalconPluginTests.section(key: "double-process-fails-2"))
        defer { cleanup() }
        var config = DeviceStreamConfig(url: server.ws, provider: "falcon", deviceID: "phone-falcon-fails")
        config.optionsJSON = #"{"window_seconds": 10, "step_seconds": 2}"#
        let report = try await server.stream(config, audio: FalconPluginTests.meeting, sampleRate: 16_000, words: [])
        #expect(report.closeCode == 1011)
        let error = try #require(report.errors.first)
        #expect(error.code == "provider_failed")
        #expect(error.message.contains("Falcon failed on the live window: pv_falcon_process failed: RUNTIME_ERROR"), "\(error.message)")
        #expect(error.message.contains("Falcon test double: process failed as its AccessKey asked"))
        #expect(!error.message.contains("double-process-fails-2"))
        #expect(try server.json("/healthz").status == 200)
    }

    /// The real libpv_falcon (vendored by scripts/setup): no activation is possible here.
    @Test func theRealLibraryIsListedUnavailableWithPicovoicesMessageAndRefusesSessions() async throws {
        let vendored = try FalconDouble.vendored()
        let key = "c3BlYWtlcnN5bmMtZTJlLWtleS1ub3QtcmVhbA=="
        let section = String(decoding: try JSONSerialization.data(withJSONObject: [
            "access_key": key, "library": vendored.library.path, "model": vendored.model.path,
        ]), as: UTF8.self)
        let (server, cleanup) = try Self.server(section: section)
        defer { cleanup() }
        let listing = try Self.providersText(server)
        #expect(!listing.contains(key))
        let providers = try server.json("/v1/providers").body["providers"] as? [[String: Any]] ?? []
        let falcon = try #require(providers.first { $0["id"] as? String == "falcon" })
        #expect(falcon["available"] as? Bool == false)
        let reason = falcon["unavailable_reason"] as? String ?? ""
        #expect(reason.contains("AccessKey"), "\(reason)")
        #expect(reason.contains("[redacted]") || reason.contains("activate"), "\(reason)")

        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let connection = try client.connect(url: server.ws, headers: server.authorization)
        let events = EventReader(connection.events)
        connection.send(.text(#"{"type":"start","device_id":"phone-pv","provider":"falcon","sample_rate":16000,"encoding":"pcm_s16le"}"#))
        let refusal = await events.nextJSON()
        #expect(refusal?["code"] as? String == "provider_unavailable")
        #expect((refusal?["message"] as? String)?.contains("AccessKey") == true)
        #expect((refusal?["message"] as? String)?.contains(key) == false)
        #expect(await events.closeCode() == 4001)
    }
}
