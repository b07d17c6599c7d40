import Dispatch
import Foundation
import Logging
import PostgresClient
import Synchronization
import Testing
import TestSupport
@testable import SpeakerSyncStore

/// The jobs queue against a real PostgreSQL: claims with SKIP LOCKED, the server-wide limit,
/// recovery of a dead server's jobs, and what an orderly stop leaves.
@Suite struct JobQueueTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.jobs")
        logger.logLevel = .critical
        return logger
    }()

    static func job(_ id: String, kind: JobRecord.Kind = .rediarization, device: String = "phone-1", conversation: String? = nil) -> JobRecord {
        JobRecord(id: id, kind: kind, deviceID: device, conversationID: conversation, provider: "energy", requestJSON: "{}")
    }

    /// A server number whose lease lock nobody holds: a server that died.
    static let deadServer = 900_001

    static func status(_ url: String, _ id: String) throws -> (status: String, attempts: Int, reason: String?, server: Int?) {
        let row = try PGConnection(connectionString: url)
            .query("SELECT status, attempts, failure_reason, server_instance FROM jobs WHERE id = $1", [id]).rows[0]
        return (try row.decode(String.self, column: "status"), try row.decode(Int.self, column: "attempts"),
                try row.decode(String?.self, column: "failure_reason"), try row.decode(Int?.self, column: "server_instance"))
    }

    @Test func claimsTakeTheOldestQueuedJobAndSkipOneAnotherClaimerHasLocked() throws {
        let url = try TestCluster.migratedDatabase()
        let queue = try JobQueue(connectionString: url, serverInstance: 1, logger: Self.logger)
        for id in ["a", "b", "c"] { #expect(try queue.enqueue(Self.job(id), limit: 10) != nil) }
        // Another claimer holds the oldest queued row locked (inside its claim): this one neither
        // waits for it nor takes it, but takes the next.
        let other = try PGConnection(connectionString: url)
        try other.execute("BEGIN")
        _ = try other.query("SELECT id FROM jobs WHERE id = 'a' FOR UPDATE")
        let claimed = try #require(try queue.claim(kind: .rediarization))
        #expect(claimed.id == "b" && claimed.status == .running && claimed.attempts == 1 && claimed.serverInstance == 1)
        try other.execute("ROLLBACK")
        #expect(try queue.claim(kind: .rediarization)?.id == "a")
        #expect(try queue.claim(kind: .rediarization)?.id == "c")
        #expect(try queue.claim(kind: .rediarization) == nil)
        // A test recording is not a re-diarization: another kind's queue.
        #expect(try queue.enqueue(Self.job("t", kind: .testRecording), limit: 10) != nil)
        #expect(try queue.claim(kind: .rediarization) == nil)
    }

    @Test func aDeviceThatUsedItsShareIsRefusedWhileOthersAreStillAdmitted() throws {
        let url = try TestCluster.migratedDatabase()
        let queue = try JobQueue(connectionString: url, serverInstance: 1, logger: Self.logger)
        // Pool 3, share 1: phone-a's second job is refused, phone-b and phone-c still get theirs.
        #expect(try queue.admit(Self.job("a1", device: "phone-a"), limit: 3, perDeviceLimit: 1).record?.id == "a1")
        guard case .deviceShareUsed = try queue.admit(Self.job("a2", device: "phone-a"), limit: 3, perDeviceLimit: 1) else {
            Issue.record("phone-a's second job was not refused for its share")
            return
        }
        #expect(try queue.admit(Self.job("b1", device: "phone-b"), limit: 3, perDeviceLimit: 1).record?.id == "b1")
        // Without a share (the admin's request) phone-a's job goes in, up to the pool.
        #expect(try queue.admit(Self.job("a3", device: "phone-a"), limit: 3).record?.id == "a3")
        guard case .full = try queue.admit(Self.job("c1", device: "phone-c"), limit: 3, perDeviceLimit: 1) else {
            Issue.record("the full pool did not refuse phone-c")
            return
        }
        // A finished job frees its device's share.
        let claimed = try #require(try queue.claim(kind: .rediarization))
        #expect(claimed.id == "a1")
        try PGConnection(connectionString: url).execute("UPDATE jobs SET status = 'done', finished_at = now() WHERE id IN ($1, $2)", ["a1", "a3"])
        #expect(try queue.admit(Self.job("a4", device: "phone-a"), limit: 3, perDeviceLimit: 1).record?.id == "a4")
        // The share counts one kind only: a test recording of phone-b is not a re-diarization.
        #expect(try queue.admit(Self.job("t1", kind: .testRecording, device: "phone-b"), limit: 3, perDeviceLimit: 1).record != nil)
    }

    @Test func concurrentClaimersNeverGetTheSameJob() throws {
        let url = try TestCluster.migratedDatabase()
        let ids = (0..<60).map { String(format: "job-%03d", $0) }
        let feeder = try JobQueue(connectionString: url, serverInstance: 1, logger: Self.logger)
        for id in ids { _ = try feeder.enqueue(Self.job(id), limit: 1_000) }
        let claimers = try (1...4).map { try JobQueue(connectionString: url, serverInstance: 10 + $0, logger: Self.logger) }
        let claims = Mutex<[Int: [String]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: claimers.count) { index in
            do {
                while let job = try claimers[index].claim(kind: .rediarization) {
                    claims.withLock { $0[index, default: []].append(job.id) }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let all = claims.withLock { $0.values.flatMap { $0 } }
        #expect(all.count == ids.count, "a job was claimed twice or not at all")
        #expect(Set(all) == Set(ids))
        // Each row names the claimer that got it.
        for (index, taken) in claims.withLock({ $0 }) {
            for id in taken { #expect(try Self.status(url, id).server == 11 + index) }
        }
    }

    @Test func theLimitIsServerWideAndHoldsUnderConcurrentAdmission() throws {
        let url = try TestCluster.migratedDatabase()
        let queues = try (1...8).map { try JobQueue(connectionString: url, serverInstance: $0, logger: Self.logger) }
        let admitted = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: queues.count) { index in
            if (try? queues[index].enqueue(Self.job("j\(index)"), limit: 4)) ?? nil != nil { admitted.withLock { $0 += 1 } }
        }
        #expect(admitted.withLock { $0 } == 4)
        // A finished job frees its place; a running one does not.
        let running = try #require(try queues[0].claim(kind: .rediarization))
        #expect(try queues[1].enqueue(Self.job("late"), limit: 4) == nil)
        #expect(try queues[0].finish(id: running.id, resultJSON: #"{"speakers":2}"#))
        #expect(try queues[1].enqueue(Self.job("late"), limit: 4) != nil)
        let done = try #require(try queues[2].job(id: running.id, kind: .rediarization, deviceID: nil))
        #expect(done.status == .done && done.progress == 1 && done.resultJSON == #"{"speakers":2}"#)
    }

    @Test func recoveryRequeuesADeadServersJobThenFailsItAfterThreeAttempts() throws {
        let url = try TestCluster.migratedDatabase()
        let lease = try ServerLease(connectionString: url, logger: Self.logger)
        let live = try JobQueue(connectionString: url, serverInstance: lease.instance, logger: Self.logger)
        let dead = try JobQueue(connectionString: url, serverInstance: Self.deadServer, logger: Self.logger)
        _ = try live.enqueue(Self.job("cut-off"), limit: 10)
        _ = try live.enqueue(Self.job("alive"), limit: 10)
        #expect(try dead.claim(kind: .rediarization)?.id == "cut-off")
        #expect(try live.claim(kind: .rediarization)?.id == "alive")

        for attempt in 1...2 {
            #expect(try live.recoverOrphans() == JobQueue.Recovery(requeued: ["cut-off"]))
            let row = try Self.status(url, "cut-off")
            #expect(row.status == "queued" && row.attempts == attempt && row.server == nil)
            // The dead server's late writes change nothing.
            #expect(try dead.heartbeat(id: "cut-off", progress: 0.5) == false)
            #expect(try dead.finish(id: "cut-off", resultJSON: "{}") == false)
            #expect(try dead.claim(kind: .rediarization)?.attempts == attempt + 1)
        }
        // The third run was cut off too: failed, saying why.
        #expect(try live.recoverOrphans() == JobQueue.Recovery(failed: ["cut-off"]))
        let failed = try Self.status(url, "cut-off")
        #expect(failed.status == "failed" && failed.attempts == 3)
        #expect(failed.reason == "interrupted by a server restart on each of its 3 attempts; not run again")
        // The live server's job was never touched.
        #expect(try Self.status(url, "alive").status == "running")
        #expect(try live.heartbeat(id: "alive", progress: 0.25))
    }

    @Test func aTestRecordingOfADeadServerIsFailedWithTheReason() throws {
        let url = try TestCluster.migratedDatabase()
        let lease = try ServerLease(connectionString: url, logger: Self.logger)
        let live = try JobQueue(connectionString: url, serverInstance: lease.instance, logger: Self.logger)
        let dead = try JobQueue(connectionString: url, serverInstance: Self.deadServer, logger: Self.logger)
        let started = try #require(try dead.enqueue(Self.job("rec", kind: .testRecording), limit: 2, startRunning: true))
        #expect(started.status == .running && started.attempts == 1 && started.serverInstance == Self.deadServer)
        #expect(try live.recoverOrphans() == JobQueue.Recovery(failed: ["rec"]))
        let row = try Self.status(url, "rec")
        #expect(row.status == "failed" && row.reason == JobQueue.interruptedReason)
    }

    @Test func anOrderlyStopPutsARunBackWithItsAttemptOrFailsWhatCannotResume() throws {
        let url = try TestCluster.migratedDatabase()
        let lease = try ServerLease(connectionString: url, logger: Self.logger)
        let queue = try JobQueue(connectionString: url, serverInstance: lease.instance, logger: Self.logger)
        _ = try queue.enqueue(Self.job("r"), limit: 10)
        _ = try queue.claim(kind: .rediarization)
        #expect(try queue.heartbeat(id: "r", progress: 0.4))
        _ = try queue.enqueue(Self.job("t", kind: .testRecording), limit: 2, startRunning: true)
        #expect(try queue.requeueRunning(kind: .rediarization) == ["r"])
        let requeued = try Self.status(url, "r")
        #expect(requeued.status == "queued" && requeued.attempts == 0 && requeued.server == nil)
        #expect(try queue.failRunning(kind: .testRecording, reason: "interrupted by a server shutdown") == ["t"])
        #expect(try Self.status(url, "t").reason == "interrupted by a server shutdown")
        // Nothing is left for the next server's recovery.
        #expect(try queue.recoverOrphans() == JobQueue.Recovery())
    }

    @Test func jobsAreScopedToTheirDeviceAndGoWithTheirConversation() throws {
        let url = try TestCluster.migratedDatabase()
        let queue = try JobQueue(connectionString: url, serverInstance: 1, logger: Self.logger)
        try PGConnection(connectionString: url).execute("""
            INSERT INTO conversations (id, device_id, provider, sample_rate, encoding, status) VALUES ('c1', 'phone-1', 'energy', 16000, 'pcm_s16le', 'finalized')
            """)
        _ = try queue.enqueue(Self.job("mine", conversation: "c1"), limit: 10)
        _ = try queue.enqueue(Self.job("theirs", device: "phone-2"), limit: 10)
        #expect(try queue.job(id: "mine", kind: .rediarization, deviceID: "phone-1")?.conversationID == "c1")
        #expect(try queue.job(id: "mine", kind: .rediarization, deviceID: "phone-2") == nil)
        #expect(try queue.job(id: "mine", kind: .testRecording, deviceID: nil) == nil)
        #expect(try queue.jobs(kind: .rediarization, deviceID: "phone-2", limit: 10).map(\.id) == ["theirs"])
        #expect(try Set(queue.jobs(kind: .rediarization, deviceID: nil, limit: 10).map(\.id)) == ["mine", "theirs"])
        try PGConnection(connectionString: url).execute("DELETE FROM conversations WHERE id = 'c1'")
        #expect(try queue.job(id: "mine", kind: .rediarization, deviceID: nil) == nil)
    }
}
