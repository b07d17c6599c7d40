import ChildProcesses
import Foundation
import PostgresClient
import Synchronization
import SpeakerSyncAudio
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// Deepgram's official Python SDK (`deepgram-sdk` from PyPI, which scripts/test installs in the test
/// venv) against the real server: libwebsockets on loopback, PostgreSQL, PocketSphinx and the
/// speakerkit plugin in its worker. The SDK is pointed at the server as at Deepgram and knows nothing
/// of SpeakerSync (scripts/python/deepgram_client.py).
@Suite(.serialized) struct DeepgramEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    struct ClientReport: Decodable {
        struct Word: Decodable {
            var word: String
            var start: Double
            var end: Double
            var speaker: Int?
            var punctuated_word: String?
        }
        var types: [String]
        var final_results: Int
        var words: [Word]
        var speakers: [Int]
        var request_ids: [String]
        var errors: [String]
        var closed: Bool
    }

    /// Runs the SDK script on `wav`; its JSON report.
    static func runClient(url: String, key: String, wav: URL) async throws -> ClientReport {
        guard let python = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_PYTHON"], !python.isEmpty else {
            throw TestPluginError("SPEAKERSYNC_TEST_PYTHON is unset: run the tests with scripts/test (its venv has deepgram-sdk)")
        }
        let script = TestPlugins.packageRoot.appendingPathComponent("scripts/python/deepgram_client.py")
        let done = try await Blocking.run {
            try Subprocess.run(Subprocess.Configuration(
                executable: python, arguments: [script.path, "--url", url, "--key", key, "--wav", wav.path, "--speed", "4"]))
        }
        guard done.exit.succeeded else {
            throw TestPluginError("deepgram_client.py ended with \(done.exit) (is deepgram-sdk installed in the test venv?): "
                + done.standardErrorText.suffix(2000))
        }
        return try JSONDecoder().decode(ClientReport.self, from: done.standardOutput)
    }

    /// The two-voice synthetic meeting ServerASREndToEndTests uses, as a 16-bit WAV.
    static func meetingWAV() throws -> URL {
        let meeting = try ServerASREndToEndTests.meeting()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("deepgram-meeting-\(getpid()).wav")
        try WAVWriter.write(AudioBuffer(samples: meeting.audio, sampleRate: meeting.sampleRate), to: url)
        return url
    }

    /// The SDK streams a two-voice meeting with `diarize=true` using a device token in its own
    /// `Authorization: Token` form. Its final `Results` carry words of two speaker numbers; every
    /// final word has a speaker; the words it got are the words stored, in order; `request_id` is the
    /// stored conversation, which belongs to the token's device; it ends with `Metadata` and a clean close.
    @Test func theOfficialSDKStreamsAMeetingAndGetsTwoSpeakers() async throws {
        let server = try TestServer()
        let token = try SecurityEndToEndTests.token(server, device: "dg-phone")
        let wav = try Self.meetingWAV()
        defer { try? FileManager.default.removeItem(at: wav) }

        let report = try await Self.runClient(url: "ws://127.0.0.1:\(server.port)", key: token, wav: wav)
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.closed)
        #expect(report.types.contains("Results") && report.types.contains("Metadata"), "\(report.types)")
        #expect(report.final_results > 0)
        #expect(report.speakers.count >= 2, "speakers \(report.speakers)")
        #expect(report.words.allSatisfy { $0.speaker != nil })
        let conversation = try #require(report.request_ids.first)
        #expect(report.request_ids.count == 1)

        let rows = try ServerASREndToEndTests.storedWords(server, conversation)
        #expect(!rows.isEmpty)
        #expect(report.words.map(\.word) == rows.map { $0.text.lowercased() })
        for (word, row) in zip(report.words, rows) {
            #expect(abs(word.start - row.start) < 0.0015 && abs(word.end - row.end) < 0.0015)
        }
        let connection = try PGConnection(connectionString: server.connectionString)
        let device = try connection.query("SELECT device_id FROM conversations WHERE id = $1", [conversation])
            .rows.first?.decode(String.self, column: "device_id")
        #expect(device == "dg-phone")
    }

    /// A Deepgram upgrade the server cannot serve is refused at the handshake with HTTP 400 and a JSON
    /// body naming the problem, as Deepgram refuses bad parameters: here no `encoding` (containerised
    /// audio is not detected).
    @Test func anUpgradeWithoutEncodingIsRefusedWith400() async throws {
        let server = try TestServer()
        let port = server.port
        let answer = try await Blocking.run {
            let connection = try RawConnection(port: port, timeoutSeconds: 30)
            try connection.send(
                "GET /v1/listen?model=nova-3&diarize=true HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nAuthorization: Token \(TestServer.adminKey)\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            return try UpgradeBurstEndToEndTests.answer(connection)
        }
        #expect(answer.status == 400, "\(answer.statusLine)")
        #expect(answer.errorCode == "encoding_required")
    }
}
