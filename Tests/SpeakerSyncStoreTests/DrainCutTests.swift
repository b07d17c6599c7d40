import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

@Suite struct DrainCutTests {
    static func light(_ conversation: String) -> DrainCut.Step { .init(conversationID: conversation, heavy: false, heldBack: false) }
    static func heavy(_ conversation: String, heldBack: Bool = false) -> DrainCut.Step {
        .init(conversationID: conversation, heavy: true, heldBack: heldBack)
    }

    @Test func lightStepsAreTakenWhole() {
        let cut = DrainCut([Self.light("a"), Self.light("b"), Self.light("a")])
        #expect(cut.taken == [0, 1, 2] && cut.kept.isEmpty)
        #expect(DrainCut([]) == DrainCut([]) && DrainCut([]).taken.isEmpty)
    }

    @Test func aHeavyStepWaitsWithTheRestOfItsConversationWhileOthersGo() {
        let cut = DrainCut([Self.heavy("a"), Self.light("b"), Self.light("a"), Self.heavy("a"), Self.light("c")])
        #expect(cut.taken == [1, 4])
        #expect(cut.kept == [0, 2, 3])
    }

    @Test func aHeavyStepHeldBackOnceGoesWhateverArrives() {
        let cut = DrainCut([Self.heavy("a", heldBack: true), Self.heavy("b"), Self.light("b"), Self.light("c")])
        #expect(cut.taken == [0, 3])
        #expect(cut.kept == [1, 2])
    }

    @Test func heavyStepsAloneAreTakenWhole() {
        let cut = DrainCut([Self.heavy("a"), Self.heavy("b"), Self.light("a")])
        #expect(cut.taken == [0, 1, 2] && cut.kept.isEmpty)
    }

    @Test func onlyLabellingsMakeAStepHeavy() {
        var step = PersistStep()
        step.conversationEnded = true
        step.changedWords = [LabelledWord(id: WordID(resultID: "r", index: 0), text: "w", startSeconds: 0, endSeconds: 0.3, confidence: 1,
                                          isFinal: true, speaker: "Speaker 1", speakerConfidence: 1, utteranceID: UtteranceID(rawValue: 1))]
        #expect(!step.isHeavy)
        step.labellings = [LabellingRecord(name: "device", provider: "device", source: .live, isComplete: true, statusReason: nil,
                                           statsJSON: "{}", turns: [], words: [])]
        #expect(step.isHeavy)
    }
}

/// The cut in a real writer: with a drain committing (held up by a lock) and the next one encoded,
/// a finalize-like step and another conversation's words queue up; the words commit first.
@Suite struct StoreWriterDrainOrderTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.drain-order")
        logger.logLevel = .critical
        return logger
    }()

    static func conversation(_ id: String, status: ConversationState.Status = .active) -> ConversationState {
        ConversationState(id: id, deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: "pcm_s16le", language: nil,
                          optionsJSON: "{}", status: status, audioSeconds: 1)
    }

    /// Waits (bounded) until the writer's encoder has taken every queued step.
    static func untilTaken(_ writer: StoreWriter) async throws {
        for _ in 0..<1_000 where writer.untakenSteps > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(writer.untakenSteps == 0)
    }

    @Test func anotherConversationsWordsCommitBeforeAQueuedLabelling() async throws {
        let url = try TestCluster.migratedDatabase()
        let writer = try StoreWriter(connectionString: url, shards: 1, logger: Self.logger)
        defer { writer.shutdown() }
        let order = Mutex<[String]>([])
        func enqueue(_ name: String, _ id: String, _ build: (inout PersistStep) -> Void) {
            var step = PersistStep()
            build(&step)
            writer.enqueue(step, conversationID: id) { result in
                if (try? result.get()) != nil { order.withLock { $0.append(name) } }
            }
        }
        for id in ["x", "a", "b"] { enqueue("created \(id)", id) { $0.conversation = Self.conversation(id) } }
        #expect(writer.flush())

        // Conversation rows cannot be written while another transaction holds SHARE on the table.
        let locker = try PGConnection(connectionString: url)
        _ = try locker.execute("BEGIN")
        _ = try locker.execute("LOCK TABLE conversations IN SHARE MODE")
        enqueue("x1", "x") { $0.conversation = Self.conversation("x") }
        try await Self.untilTaken(writer)   // x1 is being written (and waits for the lock)
        enqueue("x2", "x") { $0.conversation = Self.conversation("x") }
        try await Self.untilTaken(writer)   // x2 is encoded: the encoder waits for the writer now
        enqueue("a finalized", "a") { step in
            step.conversation = Self.conversation("a", status: .finalized)
            step.conversationEnded = true
            step.labellings = [LabellingRecord(name: "device", provider: "device", source: .live, isComplete: true, statusReason: nil,
                                               statsJSON: "{}", turns: [], words: [])]
        }
        enqueue("b words", "b") { step in
            step.changedWords = [LabelledWord(id: WordID(resultID: "r1", index: 0), text: "hello", startSeconds: 0.1, endSeconds: 0.4,
                                              confidence: 0.9, isFinal: true, speaker: "Speaker 1", speakerConfidence: 1,
                                              utteranceID: UtteranceID(rawValue: 1))]
        }
        _ = try locker.execute("COMMIT")
        #expect(writer.flush())
        #expect(order.withLock { Array($0.suffix(4)) } == ["x1", "x2", "b words", "a finalized"])
        let repository = try ConversationRepository(connectionString: url, logger: Self.logger)
        #expect(try repository.words(conversationID: "b").map(\.text) == ["hello"])
        #expect(try repository.labellings(conversationID: "a").map(\.name) == ["device"])
    }
}
