import ArgumentParser
import Foundation
import Logging
import PostgresClient
import SpeakerSyncClient
import SpeakerSyncStore
import Synchronization
import TranscriptMerge

/// Sustained words per second persisted through `StoreWriter`, shaped like live sessions: many
/// conversations each sending steps of new words, every step also relabelling the conversation's
/// previous words (a provider revising its turns). Runs on a private embedded cluster in a temporary
/// folder unless --database-url is given.
struct PersistBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "persist", abstract: "Words per second persisted to PostgreSQL through the batched store writer.")

    @Option var conversations = 200
    @Option(name: .customLong("words-per-step")) var wordsPerStep = 20
    @Option(help: "Also rewrite the previous step's words with a new speaker (a relabel) in every step.")
    var relabel = true
    @Option var seconds = 10.0
    @Option(help: "Steps in flight at most (backpressure, as sessions wait for commits).")
    var inFlight = 2_000
    @Option(name: .customLong("database-url")) var databaseURL: String?

    func run() throws {
        var logger = Logger(label: "bench.persist")
        logger.logLevel = .warning
        var cluster: EmbeddedPostgresCluster?
        var folder: URL?
        let url: String
        if let databaseURL {
            url = databaseURL
        } else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-persist-\(UUID().uuidString.prefix(8))")
            let embedded = EmbeddedPostgresCluster(dataDirectory: dir, logger: logger)
            url = try embedded.start()
            cluster = embedded
            folder = dir
        }
        defer {
            cluster?.stop()
            if let folder {
                for path in [folder.path, folder.path + ".lock", folder.path + ".pgpass"] { try? FileManager.default.removeItem(atPath: path) }
            }
        }
        let schema = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("schema")
        try MigrationRunner(directory: schema, logger: logger).migrate(PGConnection(connectionString: url))
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        for index in 0..<conversations {
            var step = PersistStep()
            step.conversation = ConversationState(id: "bench-\(index)", deviceID: "bench", provider: "device", sampleRate: 16000, encoding: "pcm_s16le", language: nil, optionsJSON: "{}", status: .active, audioSeconds: 0)
            writer.enqueue(step, conversationID: "bench-\(index)") { _ in }
        }
        writer.flush()
        let before = writer.statistics

        let pending = Atomic<Int>(0)
        let committedWords = Atomic<Int>(0)
        let started = ContinuousClock.now
        let deadline = started + .seconds(seconds)
        var round = 0
        var enqueuedNew = 0
        while ContinuousClock.now < deadline {
            for index in 0..<conversations {
                while pending.load(ordering: .relaxed) >= inFlight { Thread.sleep(forTimeInterval: 0.0005) }
                var step = PersistStep()
                step.changedWords = (0..<wordsPerStep).map { word(round: round, index: $0, speaker: "Speaker 1") }
                if relabel && round > 0 {
                    step.changedWords += (0..<wordsPerStep).map { word(round: round - 1, index: $0, speaker: "Speaker 2") }
                }
                pending.add(1, ordering: .relaxed)
                let count = wordsPerStep
                writer.enqueue(step, conversationID: "bench-\(index)") { result in
                    pending.subtract(1, ordering: .relaxed)
                    if (try? result.get()) != nil { committedWords.add(count, ordering: .relaxed) }
                }
                enqueuedNew += wordsPerStep
            }
            round += 1
        }
        writer.flush(timeoutSeconds: 120)
        let seconds = (ContinuousClock.now - started).seconds
        let after = writer.statistics
        let commits = after.commits - before.commits
        let rows = after.wordRows - before.wordRows
        print(String(format: "conversations %d, %d new words per step%@: %.0f new words/s stored, %.0f word rows written/s, %.1f commits/s, %.0f steps per commit (%.1f s)",
                     conversations, wordsPerStep, relabel ? " + relabel of the previous step" : "",
                     Double(committedWords.load(ordering: .relaxed)) / seconds, Double(rows) / seconds,
                     Double(commits) / seconds, Double(enqueuedNew / wordsPerStep) / Double(max(commits, 1)), seconds))
    }

    func word(round: Int, index: Int, speaker: String) -> LabelledWord {
        let start = Double(round) * 4 + Double(index) * 0.2
        return LabelledWord(id: WordID(resultID: "r\(round)", index: index), text: "word\(index)", startSeconds: start, endSeconds: start + 0.15, confidence: 0.9, isFinal: true, speaker: speaker, speakerConfidence: 1, utteranceID: UtteranceID(rawValue: UInt64(round + 1)))
    }
}
