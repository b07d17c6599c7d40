import Foundation
import Logging
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// The client side of the contract against the real server (libwebsockets on loopback, PostgreSQL,
/// plugins) and against listeners that answer badly: a SpeakerSyncKit session stops at once, with the
/// reason, on what retrying cannot fix, keeps retrying what may heal, and `--start-timeout` bounds the
/// wait for a first session whatever the retries are doing.
@Suite(.serialized) struct ClientContractEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// A kit session with reconnects on (fast backoff, no attempt limit: only the classification stops
    /// it) that starts and finishes at once; its outcome, or nil if it had not ended within 120 s.
    static func run(url: String, token: String?, provider: String = "device", shadows: [String] = [],
                    configure: (inout SpeakerSyncSessionConfig) -> Void = { _ in }) async throws -> (SpeakerSyncSession, SessionOutcome?) {
        var config = SpeakerSyncSessionConfig(url: url, token: token, deviceID: "phone-contract", provider: provider, sampleRate: 16_000)
        config.shadowProviders = shadows
        config.reconnect = ReconnectPolicy(initialDelaySeconds: 0.05, maxDelaySeconds: 0.2)
        configure(&config)
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let session = SpeakerSyncSession(config: config, sockets: LWSSocketFactory(client: client), logger: EndToEndTests.logger)
        session.start()
        session.send(samples: [Float](repeating: 0, count: 1600))
        let outcome = await withTaskGroup(of: SessionOutcome?.self) { group in
            group.addTask { await session.finish(timeoutSeconds: 600) }
            group.addTask {
                try? await Task.sleep(for: .seconds(120))
                return nil
            }
            let first = await group.next() ?? nil
            session.stop()
            group.cancelAll()
            return first
        }
        return (session, outcome)
    }

    /// The failure of a refused outcome (nil otherwise).
    static func refusal(_ outcome: SessionOutcome?) -> ConnectionFailure? {
        if case .refused(let failure)? = outcome { return failure }
        return nil
    }

    @Test func aWrongPathIsRefusedWith404AfterOneAttempt() async throws {
        let server = try TestServer()
        let (session, outcome) = try await Self.run(url: "ws://127.0.0.1:\(server.port)/v1/lisen", token: server.adminKey)
        let failure = try #require(Self.refusal(outcome), "\(String(describing: outcome))")
        #expect(failure.httpStatus == 404, "\(failure)")
        #expect(session.connectionAttempts == 1)
        #expect(failure.description.hasPrefix("HTTP 404 at the upgrade"))
    }

    @Test func aTokenTheServerDoesNotKnowIsRefusedWith401AfterOneAttempt() async throws {
        let server = try TestServer()
        let (session, outcome) = try await Self.run(url: server.ws, token: "sst_not-a-token-this-server-issued")
        let failure = try #require(Self.refusal(outcome), "\(String(describing: outcome))")
        #expect(failure.httpStatus == 401, "\(failure)")
        #expect(session.connectionAttempts == 1)
    }

    @Test func anUnknownProviderAndAnUnknownShadowAreRefusedAtOnce() async throws {
        let server = try TestServer()
        for (provider, shadows) in [("nemo-msdd", [String]()), ("device", ["nemo-msdd"])] {
            let (session, outcome) = try await Self.run(url: server.ws, token: server.adminKey, provider: provider, shadows: shadows)
            let failure = try #require(Self.refusal(outcome), "\(provider) \(shadows): \(String(describing: outcome))")
            #expect(failure.errorCode == "unknown_provider" && failure.closeCode == 1008, "\(failure)")
            #expect(failure.message.contains("nemo-msdd"))
            #expect(session.connectionAttempts == 1)
        }
    }

    /// sherpa-onnx without its models is loaded but unavailable; named as a shadow it refuses the start
    /// with provider_unavailable (close 4001), which the kit used to retry for ever.
    @Test func anUnavailableNamedShadowIsRefusedAtOnce() async throws {
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL")
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL")
        let (server, cleanup) = try SherpaOnnxEndToEndTests.server(configured: false)
        defer { cleanup() }
        let (session, outcome) = try await Self.run(url: server.ws, token: server.adminKey, provider: "device", shadows: ["sherpa-onnx"])
        let failure = try #require(Self.refusal(outcome), "\(String(describing: outcome))")
        #expect(failure.errorCode == "provider_unavailable" && failure.closeCode == 4001, "\(failure)")
        #expect(failure.message.contains("shadow provider sherpa-onnx is unavailable"), "\(failure)")
        #expect(session.connectionAttempts == 1)
    }

    /// A listener that accepts and never answers (a hung server): every connection hangs until the kit's
    /// open timeout, the kit retries, and the start timeout ends it with the reason.
    @Test func aServerThatNeverAnswersEndsWithTheStartTimeout() async throws {
        let listener = try CannedHTTPListener(response: nil)
        defer { listener.stop() }
        let (session, outcome) = try await Self.run(url: "ws://127.0.0.1:\(listener.port)/v1/listen", token: nil) { config in
            config.openTimeoutSeconds = 0.5
            config.startTimeoutSeconds = 3
        }
        guard case .stopped(_, let reason)? = outcome else {
            Issue.record("not ended by the start timeout: \(String(describing: outcome))")
            return
        }
        #expect(reason.hasPrefix("no session within 3 s of starting"), "\(reason)")
        #expect(session.connectionAttempts >= 2 && listener.acceptedCount >= 2, "\(session.connectionAttempts) attempts")
    }

    /// A busy server (503 with Retry-After: 1) is retried, never sooner than it asked: within 6 s that is
    /// a handful of attempts, where the 0.05 s backoff alone would make dozens.
    @Test func aBusyServerIsRetriedNoSoonerThanItsRetryAfter() async throws {
        let listener = try CannedHTTPListener(response: CannedHTTPListener.response(
            status: 503, reason: "Service Unavailable", headers: [("Retry-After", "1")]))
        defer { listener.stop() }
        let (session, outcome) = try await Self.run(url: "ws://127.0.0.1:\(listener.port)/v1/listen", token: nil) { config in
            config.startTimeoutSeconds = 6
        }
        guard case .stopped(_, let reason)? = outcome else {
            Issue.record("a 503 must be retried until the start timeout: \(String(describing: outcome))")
            return
        }
        #expect(reason.contains("HTTP 503 at the upgrade"), "\(reason)")
        #expect((2...7).contains(session.connectionAttempts), "\(session.connectionAttempts) attempts in 6 s")
    }
}

extension ClientContractEndToEndTests {
    /// A one-second recording and its words file, as `speakersync stream` reads them.
    static func recording() throws -> (folder: URL, wav: String, words: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-contract-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let wav = folder.appendingPathComponent("m.wav")
        try WAVWriter.write(AudioBuffer(samples: [Float](repeating: 0, count: 16_000), sampleRate: 16_000), to: wav)
        let words = folder.appendingPathComponent("m.json")
        try #"{"words":[{"text":"hello","start":0.2,"end":0.5}]}"#.write(to: words, atomically: true, encoding: .utf8)
        return (folder, wav.path, words.path)
    }

    @Test func theStreamCommandStopsAtOnceOnAWrongPathAndExitsNonZeroWithTheReason() async throws {
        let server = try TestServer()
        let files = try Self.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let result = try await CommandLineRun.run(
            ["stream", files.wav, "--words", files.words, "--provider", "device", "--url", "ws://127.0.0.1:\(server.port)/v1/lisen"],
            environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 120)
        #expect(!result.timedOut)
        #expect(result.status != 0)
        #expect(result.standardError.contains("the session was refused: HTTP 404 at the upgrade"), "\(result.standardError)")
        #expect(!result.standardError.contains("retrying"), "\(result.standardError)")
    }

    @Test func theStreamCommandHonoursItsStartTimeout() async throws {
        let listener = try CannedHTTPListener(response: nil)
        defer { listener.stop() }
        let files = try Self.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let result = try await CommandLineRun.run(
            ["stream", files.wav, "--words", files.words, "--provider", "device", "--start-timeout", "3",
             "--url", "ws://127.0.0.1:\(listener.port)/v1/listen"], environment: ["SPEAKERSYNC_TOKEN": "sst_x"], timeoutSeconds: 120)
        #expect(!result.timedOut, "still running after 120 s with --start-timeout 3")
        #expect(result.status != 0)
        #expect(result.standardError.contains("no session within 3 s of starting"), "\(result.standardError)")
        #expect(listener.acceptedCount >= 1)
    }
}
