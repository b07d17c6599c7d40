import Foundation
import Logging
import MeetingSynth
import SpeakerSyncServer
import TestSupport
import Testing
import WebSocketTransport
@testable import SpeakerSyncEval

/// `speakersync eval` against a real server (libwebsockets on loopback, PostgreSQL, the dlopen'd plugin).
@Suite struct EvalRunnerTests {
    static let logger: Logger = {
        var logger = Logger(label: "eval-test")
        logger.logLevel = .warning
        return logger
    }()

    func run(provider: String, directory: URL) async throws -> EvalSummary {
        var config = ServerConfig.default
        // Tests share two cores with CPU-heavy suites; a starved client must not look idle.
        config.session.idleIntervalSeconds = 600
        config.port = 0
        config.databaseURL = try TestCluster.freshDatabase()
        config.access.environmentAdminKey = "eval-test-admin-key-0123456789abcdef0123"
        let app = SpeakerSyncApplication(config: config, logger: Self.logger)
        let port = try app.start()
        defer { app.shutdown() }
        let recordings = try EvalCorpus.load(EvalCorpusSpec(
            audioPaths: [directory.path], rttmPaths: [directory.appendingPathComponent("reference.rttm").path],
            uemPaths: [directory.appendingPathComponent("reference.uem").path], wordsDirectory: directory.appendingPathComponent("words").path))
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        var evalConfig = EvalConfig(serverURL: "ws://127.0.0.1:\(port)", provider: provider, speed: nil, concurrency: 2)
        evalConfig.token = try app.createDeviceToken(deviceID: "speakersync-eval")
        return try await EvalRunner(config: evalConfig, client: client, logger: Self.logger).run(recordings)
    }

    @Test func deviceTurnsFromTheReferenceScoreAsTheOverlapFloorAndLabelEveryWord() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eval-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var synth = MeetingSetConfig.defaultSynth
        synth.overlapProbability = 0.5
        try MeetingSet.write(MeetingSetConfig(speakerCount: 3, meetingCount: 2, turnCount: 6, seed: 21, synth: synth), to: directory)
        let summary = try await run(provider: "device", directory: directory)
        #expect(summary.files.count == 2)
        // The device sends the reference turns themselves: the final turns are the reference, so DER is 0
        // (overlap included, since turns keep their overlap), every word gets a speaker, and a word's
        // label is wrong only where two reference turns cover it.
        #expect(summary.finalDER.errorRate < 0.001, "\(summary.finalDER)")
        #expect(summary.unlabelledWordCount == 0)
        #expect(summary.wderOutsideOverlapRate == 0)
        #expect(summary.exactSpeakerCountFiles == 2)
        #expect(summary.firstLabelLatency.count == summary.wordCount)
        #expect(summary.realTimeFactor == nil)   // nothing processed audio
        // Server memory is the operator's (/healthz shows it to the admin key only): a device token's
        // eval reports none rather than a figure it cannot know.
        #expect(summary.maxMemoryPerSessionBytes == nil)
    }

    @Test func pluginProviderIsScoredOnItsOwnTurns() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eval-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try MeetingSet.write(MeetingSetConfig(speakerCount: 2, meetingCount: 1, turnCount: 6, seed: 8), to: directory)
        let summary = try await run(provider: "energy", directory: directory)
        let file = try #require(summary.files.first)
        #expect(file.finalDER.referenceSeconds > 10)
        #expect(file.errors.isEmpty)
        #expect(file.chunkProcessingSeconds.count == Int((file.audioSeconds / 0.1).rounded(.up)))
        #expect((file.realTimeFactor ?? 0) > 0)
        #expect(file.firstLabelLatenciesSeconds.count == file.wordCount - file.unlabelledWordCount)
        // Whatever the baseline's quality, its score must be a real DER: bounded and not the empty hypothesis's 100 %.
        #expect(file.finalDER.errorRate < 0.5)
    }
}
