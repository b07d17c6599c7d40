import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

private let logger: Logger = {
    var logger = Logger(label: "test.store")
    logger.logLevel = .critical
    return logger
}()

private func state(_ id: String, device: String = "phone-1", status: ConversationState.Status = .active, audio: Double = 0) -> ConversationState {
    ConversationState(id: id, deviceID: device, provider: "device", sampleRate: 16_000, encoding: "pcm_s16le", language: "en", optionsJSON: #"{"k":1}"#, status: status, audioSeconds: audio)
}

private func word(_ result: String, _ index: Int, _ text: String, _ start: Double, speaker: String? = "Speaker 1", utterance: UInt64 = 1) -> LabelledWord {
    LabelledWord(id: WordID(resultID: result, index: index), text: text, startSeconds: start, endSeconds: start + 0.3, confidence: 0.9, isFinal: true, speaker: speaker, speakerConfidence: speaker == nil ? nil : 1, utteranceID: UtteranceID(rawValue: utterance))
}

/// Collects every completion outcome of a step.
private final class Outcomes: Sendable {
    let results = Mutex<[Bool]>([])
    func record(_ result: Result<Void, any Error>) {
        results.withLock { $0.append((try? result.get()) != nil) }
    }
}

private func persist(_ writer: StoreWriter, _ id: String, _ build: (inout PersistStep) -> Void) -> Outcomes {
    var step = PersistStep()
    build(&step)
    let outcomes = Outcomes()
    writer.enqueue(step, conversationID: id) { outcomes.record($0) }
    return outcomes
}

@Suite struct MigrationRunnerTests {
    @Test func migrationsApplyOnceAndAreTracked() throws {
        let url = try TestCluster.freshDatabase()
        let runner = MigrationRunner(directory: TestCluster.schemaDirectory, logger: logger)
        let connection = try PGConnection(connectionString: url)
        let onDisk = try runner.migrations().map(\.version)
        #expect(onDisk.first == 1)
        #expect(try runner.migrate(connection) == onDisk)
        #expect(try runner.migrate(connection).isEmpty)
        let tracked = try connection.query("SELECT version FROM schema_migrations ORDER BY version").rows.map { try $0.decode(Int.self, column: "version") }
        #expect(tracked == onDisk)
        for relation in ["conversations", "speakers", "speaker_keys", "words", "speaker_turns", "utterances", "transcript_lines"] {
            let found = try connection.query("SELECT to_regclass($1)::text AS name", [relation])[0].decode(String?.self, column: "name")
            #expect(found == relation)
        }
    }

    /// Two servers started together on a fresh database: while one is inside its migration (it holds
    /// the lock and has created the tracking table, not yet committed), the other waits for it and then
    /// finds the work done, instead of racing it into the catalog and dying with 23505 on pg_type.
    @Test func aServerStartingDuringAnothersMigrationWaitsAndSucceeds() async throws {
        let url = try TestCluster.freshDatabase()
        let runner = MigrationRunner(directory: TestCluster.schemaDirectory, logger: logger)
        let first = try PGConnection(connectionString: url)
        try first.execute("SELECT pg_advisory_lock($1)", [MigrationRunner.lockKey])
        try first.execute("BEGIN")
        try first.execute(MigrationRunner.createTrackingTable)

        let second = Task.detached { () throws -> [Int] in
            try runner.migrate(PGConnection(connectionString: url))
        }
        // Long enough for the second to reach PostgreSQL and block (on the lock now; on the first's
        // uncommitted catalog row before the fix, which then failed at the commit below).
        try await Task.sleep(for: .milliseconds(500))
        try first.execute("COMMIT")
        try first.execute("SELECT pg_advisory_unlock($1)", [MigrationRunner.lockKey])
        let applied = try await second.value
        #expect(applied == (try runner.migrations().map(\.version)))
        #expect(try runner.migrate(first).isEmpty)
    }

    @Test func badlyNamedMigrationIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "SELECT 1;".write(to: folder.appendingPathComponent("first.sql"), atomically: true, encoding: .utf8)
        let error = #expect(throws: StoreError.self) { try MigrationRunner(directory: folder, logger: logger).migrations() }
        #expect(error?.code == .invalidMigration)
    }
}

@Suite struct StoreWriterTests {
    @Test func stepsRoundTripThroughTheRepository() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        let outcome = persist(writer, "c1") { step in
            step.conversation = state("c1", audio: 2.5)
            step.changedWords = [word("r1", 0, "hello", 0.5), word("r1", 1, "there", 0.9), word("r2", 0, "hmm", 2.0, speaker: nil, utterance: 2)]
            step.upsertedTurns = [("device", SpeakerTurn(id: "device:400:A", speaker: "Speaker 1", startSeconds: 0.4, endSeconds: 1.5, confidence: 0.7))]
            step.speakers = [SessionSpeaker(label: "Speaker 1", firstSeenSeconds: 0.4)]
            step.keyLabels = ["device/A": "Speaker 1"]
        }
        #expect(writer.flush())
        #expect(outcome.results.withLock { $0 } == [true])
        let loaded = try #require(try repository.load(conversationID: "c1"))
        var expected = state("c1", audio: 2.5)
        let options = try JSONSerialization.jsonObject(with: Data(loaded.state.optionsJSON.utf8)) as? [String: Int]
        #expect(options == ["k": 1])   // jsonb keeps the value, not the spacing
        expected.optionsJSON = loaded.state.optionsJSON
        #expect(loaded.state == expected)
        #expect(loaded.words.map(\.text) == ["hello", "there", "hmm"])
        #expect(loaded.words[2].speaker == nil && loaded.words[2].utteranceID.rawValue == 2)
        #expect(loaded.words[0] == word("r1", 0, "hello", 0.5))
        #expect(loaded.turns.map(\.turn.id) == ["device:400:A"])
        #expect(loaded.speakers == [SessionSpeaker(label: "Speaker 1", firstSeenSeconds: 0.4)])
        #expect(loaded.keyLabels == ["device/A": "Speaker 1"])
        #expect(try repository.load(conversationID: "missing") == nil)
        let counts = try repository.wordCounts(conversationIDs: ["c1", "missing"])
        #expect(counts["c1"]?.total == 3 && counts["c1"]?.unlabelled == 1)
        #expect(counts["missing"] == nil)
    }

    @Test func laterStepsWinAndRemovalsDeleteRows() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        _ = persist(writer, "c2") { step in
            step.conversation = state("c2")
            step.changedWords = [word("r1", 0, "volatile", 0.1), word("r1", 1, "guess", 0.5)]
            step.upsertedTurns = [("energy", SpeakerTurn(id: "energy:s:1", speaker: "Speaker 1", startSeconds: 0, endSeconds: 1))]
        }
        // Enqueued back to back, likely folded into the same drain: the final result replaces the volatile one.
        _ = persist(writer, "c2") { step in
            step.changedWords = [word("r1", 0, "final", 0.1, speaker: "Speaker 2")]
            step.removedWords = [WordID(resultID: "r1", index: 1)]
            step.removedTurns = [("energy", "energy:s:1")]
            step.conversation = state("c2", status: .finalized, audio: 1)
        }
        #expect(writer.flush())
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        let loaded = try #require(try repository.load(conversationID: "c2"))
        #expect(loaded.words.map(\.text) == ["final"])
        #expect(loaded.words.first?.speaker == "Speaker 2")
        #expect(loaded.turns.isEmpty)
        #expect(loaded.state.status == .finalized)
        #expect(try repository.conversation(id: "c2")?.endedAt != nil)
    }

    @Test func manyConversationsKeepTheirOwnOrder() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        for conversation in 0..<50 {
            _ = persist(writer, "m\(conversation)") { $0.conversation = state("m\(conversation)") }
        }
        for round in 0..<10 {
            for conversation in 0..<50 {
                _ = persist(writer, "m\(conversation)") { step in
                    step.changedWords = [word("r\(round)", 0, "w\(round)", Double(round))]
                    if round > 0 {
                        // Relabel the previous round's word, as a provider revision would.
                        step.changedWords.append(word("r\(round - 1)", 0, "w\(round - 1)", Double(round - 1), speaker: "Speaker \(round)"))
                    }
                }
            }
        }
        #expect(writer.flush())
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        for conversation in [0, 17, 49] {
            let words = try repository.words(conversationID: "m\(conversation)")
            #expect(words.map(\.text) == (0..<10).map { "w\($0)" })
            #expect(words.dropLast().enumerated().allSatisfy { $1.speaker == "Speaker \($0 + 1)" })
        }
        #expect(writer.statistics.commits < 550, "steps are batched into shared transactions")
    }

    @Test func awkwardTextSurvivesTheArrayLiteralPath() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        let texts = [#"it's"#, #"say "hi""#, #"back\slash"#, "{braces}", "a,b", "NULL", "", " spaced ", "naïve 日本語 🙂", "tab\tline\nbreak", "'); DROP TABLE words; --"]
        _ = persist(writer, "q") { step in
            step.conversation = state("q")
            step.changedWords = texts.enumerated().map { word("r", $0, $1, Double($0)) }
            step.speakers = [SessionSpeaker(label: "Speaker 1", displayName: #"O'Brien "the" \boss"#)]
        }
        #expect(writer.flush())
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        #expect(try repository.words(conversationID: "q").map(\.text) == texts)
        #expect(try repository.speakers(conversationID: "q").first?.displayName == #"O'Brien "the" \boss"#)
    }

    @Test func aStepPostgreSQLRefusesIsRejectedAloneAndOthersAreStored() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        _ = persist(writer, "ok") { $0.conversation = state("ok") }
        _ = persist(writer, "bad") { $0.conversation = state("bad") }
        #expect(writer.flush())
        let good = persist(writer, "ok") { $0.changedWords = [word("r1", 0, "fine", 0.1)] }
        let bad = persist(writer, "bad") { $0.changedWords = [word("r1", 0, "nul\u{0}byte", 0.1)] }
        #expect(writer.flush())
        #expect(good.results.withLock { $0 } == [true])
        #expect(bad.results.withLock { $0 } == [false])
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        #expect(try repository.words(conversationID: "ok").map(\.text) == ["fine"])
        #expect(try repository.words(conversationID: "bad").isEmpty)
    }

    @Test func utteranceViewsGroupWordsAsTheServerDid() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        _ = persist(writer, "v") { step in
            step.conversation = state("v")
            step.changedWords = [word("r1", 0, "good", 0.0, utterance: 1), word("r1", 1, "morning", 0.4, utterance: 1),
                                 word("r2", 0, "hi", 2.0, speaker: "Speaker 2", utterance: 2)]
            step.speakers = [SessionSpeaker(label: "Speaker 1"), SessionSpeaker(label: "Speaker 2", displayName: "Alice")]
        }
        #expect(writer.flush())
        let connection = try PGConnection(connectionString: url)
        let lines = try connection.query("SELECT line FROM transcript_lines WHERE conversation_id = $1 ORDER BY start_seconds", ["v"])
            .rows.map { try $0.decode(String.self, column: "line") }
        #expect(lines == ["Speaker 1: good morning", "Alice: hi"])
    }

    @Test func writesWaitForTheDatabaseAndReportTheOutageFirst() throws {
        // The writer connects to a database that exists but has no tables yet: writes fail until the
        // migrations run, then the queued step is committed and reported again as stored.
        let url = try TestCluster.freshDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        let outcome = persist(writer, "late") { step in
            step.conversation = state("late")
            step.changedWords = [word("r1", 0, "kept", 0.2)]
        }
        let deadline = Date().addingTimeInterval(10)
        while outcome.results.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(outcome.results.withLock { $0 } == [false])
        try MigrationRunner(directory: TestCluster.schemaDirectory, logger: logger).migrate(PGConnection(connectionString: url))
        #expect(writer.flush())
        #expect(outcome.results.withLock { $0 } == [false, true])
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        #expect(try repository.words(conversationID: "late").map(\.text) == ["kept"])
    }

    @Test func listingPagesNewestFirstByDevice() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: logger)
        defer { writer.shutdown() }
        for index in 0..<5 {
            _ = persist(writer, "p\(index)") { $0.conversation = state("p\(index)", device: index == 4 ? "other" : "phone-1") }
            #expect(writer.flush())
        }
        let repository = try ConversationRepository(connectionString: url, logger: logger)
        let first = try repository.listConversations(deviceID: "phone-1", limit: 2, before: nil)
        #expect(first.map(\.state.id) == ["p3", "p2"])
        let second = try repository.listConversations(deviceID: "phone-1", limit: 2, before: (first[1].startedAtText, first[1].state.id))
        #expect(second.map(\.state.id) == ["p1", "p0"])
        #expect(try repository.listConversations(deviceID: nil, limit: 10, before: nil).count == 5)
    }
}
