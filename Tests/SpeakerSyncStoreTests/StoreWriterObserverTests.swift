import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

/// Records every commit the writer reports.
private final class CommitLog: StoreWriterObserver {
    let seconds = Mutex<[Double]>([])
    func committed(seconds: Double) { self.seconds.withLock { $0.append(seconds) } }
}

@Suite struct StoreWriterObserverTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.store-observer")
        logger.logLevel = .critical
        return logger
    }()

    @Test func theQueueDepthCountsStepsUntilTheyAreCommittedAndEachCommitIsObserved() throws {
        // A database without tables: the step fails and stays queued (depth 1) until the migrations run.
        let url = try TestCluster.freshDatabase()
        let log = CommitLog()
        let writer = try StoreWriter(connectionString: url, observer: log, logger: Self.logger)
        defer { writer.shutdown() }
        #expect(writer.queueDepth == 0)
        var step = PersistStep()
        step.conversation = ConversationState(id: "q1", deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: "pcm_s16le",
                                              language: nil, optionsJSON: "{}", status: .active, audioSeconds: 0)
        let failed = Mutex(false)
        writer.enqueue(step, conversationID: "q1") { result in
            if (try? result.get()) == nil { failed.withLock { $0 = true } }
        }
        let deadline = Date().addingTimeInterval(10)
        while !failed.withLock({ $0 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(failed.withLock { $0 }, "the write should fail before the tables exist")
        #expect(writer.queueDepth == 1)
        #expect(log.seconds.withLock { $0 }.isEmpty, "a failed transaction is not a commit")

        try MigrationRunner(directory: TestCluster.schemaDirectory, logger: Self.logger).migrate(PGConnection(connectionString: url))
        #expect(writer.flush())
        #expect(writer.queueDepth == 0)
        for index in 0..<3 {
            var next = PersistStep()
            next.speakers = [SessionSpeaker(label: "Speaker \(index + 1)")]
            writer.enqueue(next, conversationID: "q1") { _ in }
        }
        #expect(writer.flush())
        #expect(writer.queueDepth == 0)
        let commits = log.seconds.withLock { $0 }
        // At least the retried step and one drain of the three (they may fold into one transaction).
        #expect(commits.count >= 2 && commits.count <= 4, "\(commits)")
        #expect(commits.allSatisfy { $0 > 0 && $0.isFinite })
    }
}

