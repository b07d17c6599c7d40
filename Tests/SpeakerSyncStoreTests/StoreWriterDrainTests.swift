import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

/// Many sessions ending together, through a real writer and PostgreSQL: no transaction carries more
/// session ends than `StoreWriter.heavyStepsPerDrain`, every step commits, and each
/// conversation's completions come in the order its steps were queued.
@Suite struct StoreWriterDrainTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.store-drains")
        logger.logLevel = .critical
        return logger
    }()

    static func conversation(_ id: String, status: ConversationState.Status) -> ConversationState {
        ConversationState(id: id, deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: "pcm_s16le",
                          language: nil, optionsJSON: "{}", status: status, audioSeconds: 20)
    }

    @Test func sessionEndsQueuedTogetherCommitAFewPerTransactionInEachConversationsOrder() throws {
        // A database without tables: the first step fails and is retried, so what is enqueued after it
        // queues up together, as when hundreds of sessions end within a second.
        let url = try TestCluster.freshDatabase()
        let writer = try StoreWriter(connectionString: url, logger: Self.logger)
        defer { writer.shutdown() }
        let order = Mutex<[String: [Int]]>([:])
        let failures = Mutex(0)
        func enqueue(_ step: PersistStep, _ conversationID: String, _ serial: Int) {
            writer.enqueue(step, conversationID: conversationID) { result in
                switch result {
                case .success: order.withLock { $0[conversationID, default: []].append(serial) }
                case .failure: failures.withLock { $0 += 1 }
                }
            }
        }
        var first = PersistStep()
        first.conversation = Self.conversation("first", status: .active)
        enqueue(first, "first", 0)
        let deadline = Date().addingTimeInterval(10)
        while failures.withLock({ $0 }) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(failures.withLock { $0 } > 0, "the first write should fail before the tables exist")

        let endings = 20
        var serial = 1
        for index in 0..<endings {
            let id = "end-\(index)"
            var words = PersistStep()
            words.conversation = Self.conversation(id, status: .active)
            words.speakers = [SessionSpeaker(label: "Speaker 1")]
            enqueue(words, id, serial); serial += 1
            var end = PersistStep()
            end.conversation = Self.conversation(id, status: .finalized)
            end.conversationEnded = true
            end.labellings = [LabellingRecord(
                name: "device", provider: "device", source: .live, isComplete: true,
                turns: [SpeakerTurn(id: "t", speaker: "Speaker 1", startSeconds: 0, endSeconds: 20)],
                words: (0..<50).map { WordLabel(id: WordID(resultID: "r", index: $0), speaker: "Speaker 1") })]
            enqueue(end, id, serial); serial += 1
            var after = PersistStep()
            after.speakers = [SessionSpeaker(label: "Speaker 1", displayName: "Ada")]
            enqueue(after, id, serial); serial += 1
        }
        try MigrationRunner(directory: TestCluster.schemaDirectory, logger: Self.logger).migrate(PGConnection(connectionString: url))
        #expect(writer.flush())
        #expect(writer.queueDepth == 0)

        let committed = order.withLock { $0 }
        #expect(committed["first"] == [0])
        for index in 0..<endings {
            let serials = committed["end-\(index)"] ?? []
            #expect(serials.count == 3 && serials == serials.sorted(), "end-\(index): \(serials)")
        }
        // `updated_at = now()` is the transaction's start: labellings written by one transaction share it.
        let connection = try PGConnection(connectionString: url)
        let groups = try connection.query("SELECT count(*)::bigint AS n FROM labellings GROUP BY updated_at").rows.map { try $0.decode(Int.self, column: "n") }
        #expect(groups.reduce(0, +) == endings)
        #expect(groups.allSatisfy { $0 <= StoreWriter.heavyStepsPerDrain }, "\(groups)")
        let named = try connection.query("SELECT count(*)::bigint AS n FROM speakers WHERE display_name = 'Ada'").rows[0].decode(Int.self, column: "n")
        #expect(named == endings, "each conversation's step after its end is committed too")
    }
}
