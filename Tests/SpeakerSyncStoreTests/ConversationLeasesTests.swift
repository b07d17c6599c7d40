import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
import TranscriptMerge
@testable import SpeakerSyncStore

/// Leases and fencing against a real PostgreSQL: one owner per conversation at a time, a takeover
/// only from a server that is not live, and no write committed under an epoch that lost its
/// conversation (Kleppmann's fencing tokens, checked by the store writer in the write's transaction).
@Suite struct ConversationLeasesTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.leases")
        logger.logLevel = .critical
        return logger
    }()

    static func conversation(_ id: String) -> ConversationState {
        ConversationState(id: id, deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: "pcm_s16le", language: "en",
                          optionsJSON: "{}", status: .active, audioSeconds: 0)
    }

    static func word(_ result: String, _ text: String) -> LabelledWord {
        LabelledWord(id: WordID(resultID: result, index: 0), text: text, startSeconds: 1, endSeconds: 1.3, confidence: 0.9, isFinal: true,
                     speaker: nil, speakerConfidence: nil, utteranceID: UtteranceID(rawValue: 1))
    }

    /// Writes one step through `writer` and waits for its first outcome.
    static func write(_ writer: StoreWriter, _ id: String, fence: WriteFence?, words: [LabelledWord],
                      releasesLease: Bool = false) -> Result<Void, any Error> {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        var step = PersistStep()
        step.conversation = conversation(id)
        step.changedWords = words
        step.fence = fence
        step.releasesLease = releasesLease
        writer.enqueue(step, conversationID: id) { result in
            let first = outcome.withLock { value -> Bool in
                guard value == nil else { return false }
                value = result
                return true
            }
            if first { done.signal() }
        }
        _ = done.wait(timeout: .now() + 30)
        return outcome.withLock { $0 } ?? .failure(StoreError(code: .writeFailed, message: "no outcome within 30 s"))
    }

    /// Two live servers on one database, each with its conversation leases.
    static func twoServers(_ url: String, leaseSeconds: Double)
        throws -> (first: ServerLease, second: ServerLease, firstLeases: ConversationLeases, secondLeases: ConversationLeases) {
        let first = try ServerLease(connectionString: url, leaseSeconds: leaseSeconds, logger: logger)
        let second = try ServerLease(connectionString: url, leaseSeconds: leaseSeconds, logger: logger)
        return (first, second, try ConversationLeases(connectionString: url, serverInstance: first.instance, logger: logger),
                try ConversationLeases(connectionString: url, serverInstance: second.instance, logger: logger))
    }

    static func storedWords(_ url: String, _ id: String) throws -> [String] {
        try PGConnection(connectionString: url).query("SELECT text FROM words WHERE conversation_id = $1 ORDER BY text", [id])
            .rows.map { try $0.decode(String.self, column: "text") }
    }

    @Test func aLiveServersConversationIsHeldAndALapsedOnesIsTakenOverUnderAHigherEpoch() throws {
        let url = try TestCluster.migratedDatabase()
        let (first, second, firstLeases, secondLeases) = try Self.twoServers(url, leaseSeconds: 2)

        #expect(try firstLeases.claim(conversationID: "c1", deviceID: "phone-1") == .acquired(epoch: 1))
        // The same server claiming again (a resume on it) takes a new epoch: its old session is fenced too.
        #expect(try firstLeases.claim(conversationID: "c1", deviceID: "phone-1") == .acquired(epoch: 2))
        #expect(try secondLeases.claim(conversationID: "c1", deviceID: "phone-1") == .held(serverInstance: first.instance))
        // Listed elsewhere once its owner published it (only the current epoch's publication counts).
        #expect(try secondLeases.remoteSessions(deviceID: nil).isEmpty)
        try firstLeases.publish([(conversationID: "c1", epoch: 1, json: #"{"provider":"stale"}"#)])
        #expect(try secondLeases.remoteSessions(deviceID: nil).isEmpty)
        try firstLeases.publish([(conversationID: "c1", epoch: 2, json: #"{"provider":"device"}"#)])
        #expect(try secondLeases.remoteSessions(deviceID: nil).map(\.conversationID) == ["c1"])
        #expect(try secondLeases.remoteSessions(deviceID: nil).first?.snapshotJSON.contains("device") == true)
        #expect(try secondLeases.remoteSessions(deviceID: "phone-2").isEmpty)

        // The first server stops renewing (paused, cut off): once its lease expires by PostgreSQL's
        // clock the conversation is the second's, and the first one's list entry is gone.
        Thread.sleep(forTimeInterval: 2.5)
        #expect(second.renew())
        #expect(first.remainingSeconds <= 0)
        #expect(try secondLeases.remoteSessions(deviceID: nil).isEmpty)
        #expect(try secondLeases.claim(conversationID: "c1", deviceID: "phone-1") == .acquired(epoch: 3))
        // Renewing again does not give the first server its conversation back.
        #expect(first.renew())
        #expect(try firstLeases.claim(conversationID: "c1", deviceID: "phone-1") == .held(serverInstance: second.instance))

        // Released, anyone may claim it at once; every claim is in the history, one server per epoch.
        try secondLeases.release(conversationID: "c1", epoch: 3)
        #expect(try firstLeases.claim(conversationID: "c1", deviceID: "phone-1") == .acquired(epoch: 4))
        let history = try PGConnection(connectionString: url)
            .query("SELECT epoch, server_instance FROM lease_history WHERE conversation_id = 'c1' ORDER BY epoch").rows
            .map { (try $0.decode(Int64.self, column: "epoch"), try $0.decode(Int.self, column: "server_instance")) }
        #expect(history.map(\.0) == [1, 2, 3, 4])
        #expect(history.map(\.1) == [first.instance, first.instance, second.instance, first.instance])
    }

    @Test func aServerThatEndedItsLeaseLosesItsConversationsAtOnce() throws {
        let url = try TestCluster.migratedDatabase()
        let (first, second, firstLeases, secondLeases) = try Self.twoServers(url, leaseSeconds: 60)
        #expect(try firstLeases.claim(conversationID: "c2", deviceID: "phone-1") == .acquired(epoch: 1))
        #expect(second.renew())
        #expect(second.peersAtLastRenewal == 1)
        first.end()   // an orderly stop: no waiting for a 60 s lease
        #expect(try secondLeases.claim(conversationID: "c2", deviceID: "phone-1") == .acquired(epoch: 2))
    }

    @Test func aWriteUnderAnEpochThatLostItsConversationIsRefusedWhileOtherConversationsAreWritten() throws {
        let url = try TestCluster.migratedDatabase()
        let lease = try ServerLease(connectionString: url, leaseSeconds: 60, logger: Self.logger)
        let leases = try ConversationLeases(connectionString: url, serverInstance: lease.instance, logger: Self.logger)
        let writer = try StoreWriter(connectionString: url, shards: 1, logger: Self.logger)
        defer { writer.shutdown() }
        guard case .acquired(let old) = try leases.claim(conversationID: "c3", deviceID: "phone-1"),
              case .acquired(let other) = try leases.claim(conversationID: "c4", deviceID: "phone-1") else {
            Issue.record("claims failed")
            return
        }
        let oldFence = WriteFence(epoch: old, serverInstance: lease.instance)
        #expect((try? Self.write(writer, "c3", fence: oldFence, words: [Self.word("r1", "before")]).get()) != nil)
        // Another session claims c3 (a resume): the old session's next write is refused as fenced and
        // nothing of it is stored, while c4's write in the same drain is committed.
        guard case .acquired(let new) = try leases.claim(conversationID: "c3", deviceID: "phone-1") else {
            Issue.record("takeover failed")
            return
        }
        let stale = Mutex<Result<Void, any Error>?>(nil)
        let staleDone = DispatchSemaphore(value: 0)
        var staleStep = PersistStep()
        staleStep.changedWords = [Self.word("r2", "stale")]
        staleStep.fence = oldFence
        writer.enqueue(staleStep, conversationID: "c3") { result in
            stale.withLock { $0 = $0 ?? result }
            staleDone.signal()
        }
        let kept = Self.write(writer, "c4", fence: WriteFence(epoch: other, serverInstance: lease.instance), words: [Self.word("r1", "other")])
        _ = staleDone.wait(timeout: .now() + 30)
        if case .failure(let error as StoreError) = stale.withLock({ $0 }) {
            #expect(error.code == .fenced)
        } else {
            Issue.record("the stale write was not refused as fenced")
        }
        #expect((try? kept.get()) != nil)
        #expect((try? Self.write(writer, "c3", fence: WriteFence(epoch: new, serverInstance: lease.instance),
                                 words: [Self.word("r3", "after")]).get()) != nil)
        #expect(try Self.storedWords(url, "c3") == ["after", "before"])
        #expect(try Self.storedWords(url, "c4") == ["other"])
        // The audit the fleet harness checks: each epoch written by one server, nothing after a later claim.
        let audit = try PGConnection(connectionString: url).query("""
            SELECT count(*)::int AS stale FROM conversation_writes w JOIN lease_history h
              ON h.conversation_id = w.conversation_id AND h.epoch > w.epoch AND h.acquired_at < w.last_at
            """).rows[0].decode(Int.self, column: "stale")
        #expect(audit == 0)
        let epochs = try PGConnection(connectionString: url)
            .query("SELECT epoch FROM conversation_writes WHERE conversation_id = 'c3' ORDER BY epoch").rows
            .map { try $0.decode(Int64.self, column: "epoch") }
        #expect(epochs == [old, new])
    }

    /// The row of the conversation's lease: its epoch and holder (nil: released).
    static func lease(_ url: String, _ id: String) throws -> (epoch: Int64, holder: Int?)? {
        try PGConnection(connectionString: url).query("SELECT epoch, server_instance FROM conversation_leases WHERE conversation_id = $1", [id])
            .rows.first.map { (try $0.decode(Int64.self, column: "epoch"), try $0.decode(Int?.self, column: "server_instance")) }
    }

    /// A session's last step gives its lease up in the step's own transaction: committed, the
    /// conversation is free for any server at once (its epoch kept, so the next claim moves it on).
    /// A last step under an epoch that lost the conversation releases nothing of the new holder's.
    @Test func aSessionsLastStepReleasesItsLeaseInItsOwnTransactionUnlessItsEpochLostTheConversation() throws {
        let url = try TestCluster.migratedDatabase()
        let (first, second, firstLeases, secondLeases) = try Self.twoServers(url, leaseSeconds: 60)
        #expect(second.instance != first.instance)
        let writer = try StoreWriter(connectionString: url, shards: 1, logger: Self.logger)
        defer { writer.shutdown() }
        guard case .acquired(let epoch) = try firstLeases.claim(conversationID: "c5", deviceID: "phone-1") else {
            Issue.record("claim failed")
            return
        }
        let fence = WriteFence(epoch: epoch, serverInstance: first.instance)
        #expect((try? Self.write(writer, "c5", fence: fence, words: [Self.word("r1", "hello")]).get()) != nil)
        // Held by a live server: the second cannot claim it.
        #expect(try secondLeases.claim(conversationID: "c5", deviceID: "phone-1") == .held(serverInstance: first.instance))
        #expect((try? Self.write(writer, "c5", fence: fence, words: [Self.word("r2", "bye")], releasesLease: true).get()) != nil)
        #expect(try Self.lease(url, "c5")?.epoch == epoch)
        #expect(try Self.lease(url, "c5")?.holder == nil)
        #expect(try Self.storedWords(url, "c5") == ["bye", "hello"])
        #expect(try secondLeases.claim(conversationID: "c5", deviceID: "phone-1") == .acquired(epoch: epoch + 1))

        // A resume on the first server took c6 over from an older session of it: that session's last
        // step is refused as fenced and the new session keeps the lease.
        guard case .acquired(let old) = try firstLeases.claim(conversationID: "c6", deviceID: "phone-1"),
              case .acquired(let new) = try firstLeases.claim(conversationID: "c6", deviceID: "phone-1") else {
            Issue.record("claims failed")
            return
        }
        let stale = Self.write(writer, "c6", fence: WriteFence(epoch: old, serverInstance: first.instance),
                               words: [Self.word("r1", "stale")], releasesLease: true)
        if case .failure(let error as StoreError) = stale {
            #expect(error.code == .fenced)
        } else {
            Issue.record("the stale last step was not refused as fenced")
        }
        #expect(try Self.lease(url, "c6")?.epoch == new)
        #expect(try Self.lease(url, "c6")?.holder == first.instance)
        #expect(try Self.storedWords(url, "c6").isEmpty)
    }
}
