import Foundation
import Logging
import PostgresClient

/// Background jobs in PostgreSQL (`jobs`, migration 0008), shared by every server on the database:
/// a job a server answered 202 for outlives that server.
///
/// A queue as river, Oban and pg-boss make one: `claim` takes the oldest queued job of a kind with a
/// single `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT 1)`, which commits at once. Two
/// servers claiming together never get the same job and never wait for each other; no transaction
/// stays open while a job runs. Instead the row says who runs it (`server_instance`, the number of
/// the server's `ServerLease`), and a job whose server holds no lease lock was cut off: `recoverOrphans`
/// runs it again or fails it.
///
/// Every statement that changes a running job names this server (`server_instance = $n`), so a
/// server that lost a job to recovery (its lease connection broke) cannot overwrite what the next
/// server does with it: its writes report `false` and it stops.
///
/// One connection of its own for the queue's changes (one statement at a time), and a small pool for
/// the status reads of HTTP callers.
public final class JobQueue: Sendable {
    /// Runs of a resumable job that a stop may cut off before it is failed instead.
    public static let maxAttempts = 3
    /// 'SSYJ' in ASCII: the advisory lock class that serialises admission (one key per kind), so
    /// two servers admitting together cannot both take the last free place.
    public static let admissionLockClass: Int32 = 1_397_971_274
    /// Finished jobs are kept this long for their callers, then deleted when another of their kind is added.
    public static let keepFinishedDays = 30.0

    public let serverInstance: Int
    private let logger: Logger
    private let connection: SerialConnection
    /// Callers polling a job's status (`GET /v1/diarization-jobs/{id}` every second from many
    /// devices) read on connections of their own, never waiting behind a claim or a heartbeat.
    private let reads: PGConnectionPool

    public init(connectionString: String, serverInstance: Int, readPoolSize: Int = 2, logger: Logger) throws {
        self.serverInstance = serverInstance
        self.logger = logger
        connection = try SerialConnection(connectionString: connectionString, config: PGConnectionConfig.default.detectingDeadPeers(withinSeconds: 10))
        reads = PGConnectionPool(connectionString: connectionString, size: readPoolSize)
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try connection.withConnection(body)
    }

    // MARK: Adding

    /// What `admit` did.
    public enum Admission: Sendable {
        case added(JobRecord)
        /// `limit` jobs of the kind are queued or running on all servers.
        case full
        /// The job's device has `perDeviceLimit` of them already.
        case deviceShareUsed

        public var record: JobRecord? {
            if case .added(let record) = self { record } else { nil }
        }
    }

    /// Adds `job` unless `limit` jobs of its kind are already queued or running on any server; nil
    /// then. `startRunning`: the job is this server's from the start (a test recording, which only
    /// the server holding its caller's credential can run) instead of waiting in the queue.
    public func enqueue(_ job: JobRecord, limit: Int, startRunning: Bool = false) throws -> JobRecord? {
        try admit(job, limit: limit, startRunning: startRunning).record
    }

    /// `enqueue`, and also refused when `job.deviceID` already has `perDeviceLimit` jobs of its kind
    /// queued or running (nil: no share). Both counts are taken under the kind's admission lock, so
    /// two requests at once cannot both take the last place.
    public func admit(_ job: JobRecord, limit: Int, perDeviceLimit: Int? = nil, startRunning: Bool = false) throws -> Admission {
        try withConnection { connection in
            try connection.transaction { connection -> Admission in
                try connection.execute("SELECT pg_advisory_xact_lock($1, $2)", [Self.admissionLockClass, Self.lockKey(job.kind)])
                let counts = try connection.query("""
                    SELECT count(*)::int AS pending, (count(*) FILTER (WHERE device_id = $2))::int AS device_pending
                    FROM jobs WHERE kind = $1 AND status IN ('queued', 'running')
                    """, [job.kind.rawValue, job.deviceID]).rows[0]
                guard try counts.decode(Int.self, column: "pending") < limit else { return .full }
                if let perDeviceLimit, try counts.decode(Int.self, column: "device_pending") >= perDeviceLimit {
                    return .deviceShareUsed
                }
                try connection.execute("""
                    DELETE FROM jobs WHERE kind = $1 AND status IN ('done', 'failed')
                      AND finished_at < now() - make_interval(secs => $2)
                    """, [job.kind.rawValue, Self.keepFinishedDays * 86_400])
                let row = try connection.query("""
                    INSERT INTO jobs (id, kind, device_id, conversation_id, provider, request, result, status, attempts,
                                      server_instance, started_at, heartbeat_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
                            CASE WHEN $8 = 'running' THEN 1 ELSE 0 END,
                            CASE WHEN $8 = 'running' THEN $9::int END,
                            CASE WHEN $8 = 'running' THEN now() END,
                            CASE WHEN $8 = 'running' THEN now() END)
                    RETURNING \(JobRecord.columns)
                    """, [job.id, job.kind.rawValue, job.deviceID, job.conversationID, job.provider, job.requestJSON, job.resultJSON,
                          startRunning ? JobRecord.Status.running.rawValue : JobRecord.Status.queued.rawValue, serverInstance]).rows[0]
                return .added(try JobRecord(row: row))
            }
        }
    }

    private static func lockKey(_ kind: JobRecord.Kind) -> Int32 {
        Int32(JobRecord.Kind.allCases.firstIndex(of: kind) ?? 0)
    }

    // MARK: Running

    /// Takes the oldest queued job of `kind` for this server (running, one more attempt); nil when
    /// none is queued or every queued one is being claimed by another server this instant.
    public func claim(kind: JobRecord.Kind) throws -> JobRecord? {
        try withConnection { connection in
            try connection.query("""
                UPDATE jobs SET status = 'running', server_instance = $2, attempts = attempts + 1, progress = 0,
                                started_at = now(), heartbeat_at = now(), failure_reason = NULL
                WHERE status = 'queued' AND id = (
                    SELECT id FROM jobs WHERE kind = $1 AND status = 'queued'
                    ORDER BY created_at, id
                    FOR UPDATE SKIP LOCKED
                    LIMIT 1)
                RETURNING \(JobRecord.columns)
                """, [kind.rawValue, serverInstance]).rows.first.map(JobRecord.init(row:))
        }
    }

    /// Progress and a sign of life (and the job's result so far, when given). False when the job is
    /// no longer this server's to run (recovered elsewhere, or put back at shutdown).
    @discardableResult
    public func heartbeat(id: String, progress: Double, resultJSON: String? = nil) throws -> Bool {
        try withConnection { connection in
            try connection.execute("""
                UPDATE jobs SET progress = $3, heartbeat_at = now(), result = coalesce($4, result)
                WHERE id = $1 AND status = 'running' AND server_instance = $2
                """, [id, serverInstance, min(1, max(0, progress)), resultJSON]) > 0
        }
    }

    /// Ends a job this server runs: done with its result, or failed with the reason. False when it
    /// was no longer this server's (then nothing is written).
    @discardableResult
    public func finish(id: String, failureReason: String? = nil, resultJSON: String?) throws -> Bool {
        try withConnection { connection in
            try connection.execute("""
                UPDATE jobs SET status = CASE WHEN $3::text IS NULL THEN 'done' ELSE 'failed' END,
                                progress = CASE WHEN $3::text IS NULL THEN 1 ELSE progress END,
                                failure_reason = $3, result = coalesce($4, result), finished_at = now(), heartbeat_at = now()
                WHERE id = $1 AND status = 'running' AND server_instance = $2
                """, [id, serverInstance, failureReason, resultJSON]) > 0
        }
    }

    /// Puts this server's running jobs of `kind` back in the queue, except `keeping`: at an orderly
    /// stop (the run was not the job's fault, so its attempt is given back), and for a claim whose
    /// answer was lost with the connection. Returns the ids.
    @discardableResult
    public func requeueRunning(kind: JobRecord.Kind, keeping: [String] = []) throws -> [String] {
        try withConnection { connection in
            try connection.query("""
                UPDATE jobs SET status = 'queued', server_instance = NULL, attempts = greatest(attempts - 1, 0), progress = 0,
                                started_at = NULL, heartbeat_at = NULL
                WHERE kind = $1 AND status = 'running' AND server_instance = $2 AND NOT (id = ANY($3::text[]))
                RETURNING id
                """, [kind.rawValue, serverInstance, keeping]).rows.map { try $0.decode(String.self, column: "id") }
        }
    }

    /// Fails this server's running jobs of `kind` with `reason`, except `keeping`: at an orderly stop,
    /// for jobs that cannot be resumed elsewhere. Returns the ids.
    @discardableResult
    public func failRunning(kind: JobRecord.Kind, reason: String, keeping: [String] = []) throws -> [String] {
        try withConnection { connection in
            try connection.query("""
                UPDATE jobs SET status = 'failed', failure_reason = $3, finished_at = now()
                WHERE kind = $1 AND status = 'running' AND server_instance = $2 AND NOT (id = ANY($4::text[]))
                RETURNING id
                """, [kind.rawValue, serverInstance, reason, keeping]).rows.map { try $0.decode(String.self, column: "id") }
        }
    }

    // MARK: Reading

    /// One job of `kind`; with `deviceID`, only if it is that device's (another device's is nil, as a
    /// missing one).
    public func job(id: String, kind: JobRecord.Kind, deviceID: String?) throws -> JobRecord? {
        try reads.withConnection { connection in
            try connection.query("""
                SELECT \(JobRecord.columns) FROM jobs WHERE id = $1 AND kind = $2 AND ($3::text IS NULL OR device_id = $3)
                """, [id, kind.rawValue, deviceID]).rows.first.map(JobRecord.init(row:))
        }
    }

    /// The newest jobs of `kind` first; with `deviceID`, that device's only.
    public func jobs(kind: JobRecord.Kind, deviceID: String?, limit: Int) throws -> [JobRecord] {
        try reads.withConnection { connection in
            try connection.query("""
                SELECT \(JobRecord.columns) FROM jobs WHERE kind = $1 AND ($2::text IS NULL OR device_id = $2)
                ORDER BY created_at DESC, id DESC LIMIT $3
                """, [kind.rawValue, deviceID, limit]).rows.map(JobRecord.init(row:))
        }
    }
}

extension JobQueue {
    /// What `recoverOrphans` did, by job id.
    public struct Recovery: Sendable, Equatable {
        public var requeued: [String] = []
        public var failed: [String] = []
    }

    /// Why a job that cannot be resumed was failed when its server was found gone.
    public static let interruptedReason = "interrupted by a server restart"

    /// Recovers the running jobs whose server holds no lease lock (it died, or stopped without putting
    /// them back): a resumable kind goes back to the queue, unless it has used `maxAttempts` runs,
    /// then it fails saying so; any other kind fails with `interruptedReason`. Run at start, after the
    /// lease is taken (as `ServerLease.sweepOrphans`), and now and then while the server runs, so a
    /// job of a server that died is taken up by the servers still running.
    @discardableResult
    public func recoverOrphans(maxAttempts: Int = JobQueue.maxAttempts) throws -> Recovery {
        let resumable = JobRecord.Kind.allCases.filter(\.isResumable).map(\.rawValue)
        let rows = try withConnection { connection in
            try connection.query("""
                UPDATE jobs j SET
                    status = CASE WHEN j.kind = ANY($2::text[]) AND j.attempts < $3 THEN 'queued' ELSE 'failed' END,
                    failure_reason = CASE WHEN j.kind = ANY($2::text[]) AND j.attempts < $3 THEN NULL
                                          WHEN j.kind = ANY($2::text[]) THEN format($5, j.attempts)
                                          ELSE $4 END,
                    server_instance = CASE WHEN j.kind = ANY($2::text[]) AND j.attempts < $3 THEN NULL ELSE j.server_instance END,
                    progress = CASE WHEN j.kind = ANY($2::text[]) AND j.attempts < $3 THEN 0 ELSE j.progress END,
                    finished_at = CASE WHEN j.kind = ANY($2::text[]) AND j.attempts < $3 THEN NULL ELSE now() END
                WHERE j.status = 'running' AND NOT \(ServerLease.holdsLock("j.server_instance", lockClass: "$1::int"))
                RETURNING j.id, j.status
                """, [ServerLease.lockClass, resumable, maxAttempts, Self.interruptedReason,
                      "\(Self.interruptedReason) on each of its %s attempts; not run again"]).rows
        }
        var recovery = Recovery()
        for row in rows {
            let id = try row.decode(String.self, column: "id")
            if try row.decode(String.self, column: "status") == JobRecord.Status.queued.rawValue {
                recovery.requeued.append(id)
            } else {
                recovery.failed.append(id)
            }
        }
        if !recovery.requeued.isEmpty || !recovery.failed.isEmpty {
            logger.warning("jobs left running by a server that stopped were recovered", metadata: [
                "requeued": "\(recovery.requeued.joined(separator: ","))", "failed": "\(recovery.failed.joined(separator: ","))"])
        }
        return recovery
    }
}

extension JobRecord.Kind {
    /// Whether a run cut off by a stop can simply be run again. A re-diarization can: it reads the
    /// stored audio and replaces its labelling whole. A test recording cannot: it streams with its
    /// caller's credential, which is never stored, so no other run could present it.
    public var isResumable: Bool { self == .rediarization }
}
