import Foundation
import Logging
import PostgresClient
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

/// Labellings in a real PostgreSQL: written whole through the writer, read back as written, replaced
/// by name, and deleted with their conversation.
@Suite struct LabellingStoreTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.labellings")
        logger.logLevel = .critical
        return logger
    }()

    static func labelling(_ name: String, source: LabellingSource, speakers: [String?], complete: Bool = true) -> LabellingRecord {
        LabellingRecord(
            name: name, provider: name.split(separator: ":").first.map(String.init) ?? name, source: source, isComplete: complete,
            statusReason: complete ? nil : "the provider fell behind", statsJSON: #"{"real_time_factor":0.03}"#,
            turns: [SpeakerTurn(id: "a", speaker: "Speaker 1", startSeconds: 0, endSeconds: 1.5, confidence: 0.8),
                    SpeakerTurn(id: "b", speaker: "Speaker 2", startSeconds: 1.5, endSeconds: 3, confidence: nil)],
            words: speakers.enumerated().map { WordLabel(id: WordID(resultID: "r1", index: $0.offset), speaker: $0.element, speakerConfidence: $0.element == nil ? nil : 0.9) })
    }

    @Test func labellingsAreStoredWholeReplacedByNameAndDeletedWithTheirConversation() throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, logger: Self.logger)
        defer { writer.shutdown() }
        let repository = try ConversationRepository(connectionString: url, logger: Self.logger)
        var step = PersistStep()
        step.conversation = ConversationState(id: "c1", deviceID: "phone-1", provider: "speakerkit", sampleRate: 16_000, encoding: "pcm_s16le",
                                              language: nil, optionsJSON: "{}", status: .finalized, audioSeconds: 3)
        let live = Self.labelling("speakerkit", source: .live, speakers: ["Speaker 1", "Speaker 1", "Speaker 2"])
        let shadow = Self.labelling("energy", source: .shadow, speakers: ["Speaker 1", nil, "Speaker 1"], complete: false)
        step.labellings = [live, shadow]
        writer.enqueue(step, conversationID: "c1") { _ in }
        #expect(writer.flush())

        let summaries = try repository.labellings(conversationID: "c1")
        #expect(summaries.map(\.name) == ["energy", "speakerkit"])
        #expect(summaries.map(\.wordCount) == [3, 3])
        #expect(summaries.map(\.labelledWordCount) == [2, 3])
        #expect(summaries.map(\.speakerCount) == [2, 2])
        #expect(summaries.map(\.isComplete) == [false, true])
        #expect(summaries[0].statusReason == "the provider fell behind")
        let read = try #require(try repository.labelling(conversationID: "c1", name: "energy"))
        #expect(read.source == .shadow && read.provider == "energy" && !read.isComplete)
        #expect(read.words == shadow.words)
        #expect(read.turns.map { [$0.speaker, "\($0.startSeconds)", "\($0.endSeconds)", "\($0.confidence.map { "\($0)" } ?? "nil")"] }
                == shadow.turns.map { [$0.speaker, "\($0.startSeconds)", "\($0.endSeconds)", "\($0.confidence.map { "\($0)" } ?? "nil")"] })
        #expect(read.statsJSON.contains("real_time_factor"))
        #expect(try repository.labelling(conversationID: "c1", name: "falcon") == nil)

        // Written again under the same name: replaced, not added to.
        var again = PersistStep()
        var finished = Self.labelling("energy", source: .shadow, speakers: ["Speaker 2"])
        finished.turns = [SpeakerTurn(id: "x", speaker: "Speaker 2", startSeconds: 0, endSeconds: 3)]
        again.labellings = [finished]
        writer.enqueue(again, conversationID: "c1") { _ in }
        #expect(writer.flush())
        let replaced = try #require(try repository.labelling(conversationID: "c1", name: "energy"))
        #expect(replaced.isComplete && replaced.turns.count == 1 && replaced.words == finished.words)
        #expect(try repository.labelling(conversationID: "c1", name: "speakerkit")?.words == live.words)

        // Deleting the conversation deletes its labellings, their turns and their words.
        let connection = try PGConnection(connectionString: url)
        _ = try connection.query("DELETE FROM conversations WHERE id = $1", ["c1"])
        for table in ["labellings", "labelling_turns", "labelling_words"] {
            let left = try connection.query("SELECT count(*)::bigint AS n FROM \(table)").rows[0].decode(Int.self, column: "n")
            #expect(left == 0, "\(table)")
        }
    }
}
