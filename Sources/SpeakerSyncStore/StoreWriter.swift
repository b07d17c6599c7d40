import Foundation
import Logging
import PostgresClient

/// One writer connection with its two threads; `StoreWriter` spreads conversations over several.
/// Writes sessions' steps to PostgreSQL off the WebSocket and session threads.
///
/// Any thread enqueues. An encoding thread takes everything queued (across all conversations) and
/// folds it into one set of changes per table — the later step wins per primary key, so order
/// within a conversation is kept — encoding the words for COPY; the writer thread, which owns the
/// one connection, commits each such drain in one transaction (COPY into a staging table plus
/// `INSERT … ON CONFLICT`, and `unnest($n::type[])` statements with bind parameters for the small
/// tables), then calls the completions. The two threads overlap, and the cost of a commit is shared
/// by every session that wrote in the meantime.
///
/// When a write fails, each step's completion is called once with the error (the session tells its
/// device the words are not stored yet); the steps stay queued and are retried with backoff on a
/// fresh connection; once committed, the completions are called again with success. Nothing a
/// completion reported as stored is lost; nothing is dropped silently. A long outage keeps the
/// queued steps in memory.
final class StoreWriterShard: @unchecked Sendable {
    typealias Completion = StoreWriter.Completion

    private struct Pending {
        var conversationID: String
        var step: PersistStep
        var completion: Completion
        var failureReported = false
    }

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [Pending] = []
    private var encoding = false
    private var encoded: (drain: [Pending], changes: ChangeSet)?
    private var encoderDone = false
    private var writing = false
    private var stopping = false
    private var stopped = false

    // Only used on the writer thread.
    private var connection: PGConnection? {
        didSet { stagingReady = false }
    }
    private var stagingReady = false
    private let connectionString: String
    private let logger: Logger

    private var commits = 0
    private var wordRows = 0
    /// Steps enqueued and not yet reported committed or rejected (queued, being encoded, or being written).
    private var waitingSteps = 0
    private let observer: (any StoreWriterObserver)?

    /// Steps waiting in this shard (see `waitingSteps`).
    var queueDepth: Int {
        condition.lock()
        defer { condition.unlock() }
        return waitingSteps
    }

    /// Figures for benchmarks: transactions committed and word rows written so far.
    var statistics: (commits: Int, wordRows: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (commits, wordRows)
    }

    init(connectionString: String, observer: (any StoreWriterObserver)? = nil, logger: Logger) throws {
        self.connectionString = connectionString
        self.observer = observer
        self.logger = logger
        self.connection = try PGConnection(connectionString: connectionString, config: Self.connectionConfig)
        let encoder = Thread { [self] in encodeLoop() }
        encoder.name = "speakersync.store-encoder"
        encoder.start()
        let committer = Thread { [self] in run() }
        committer.name = "speakersync.store-writer"
        committer.start()
    }

    /// Queues a step; `completion` runs on the writer thread after the commit (see the type's notes).
    func enqueue(_ step: PersistStep, conversationID: String, completion: @escaping Completion) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            completion(.failure(StoreError(code: .shutDown, message: "the store writer is shut down")))
            return
        }
        queue.append(Pending(conversationID: conversationID, step: step, completion: completion))
        waitingSteps += 1
        condition.broadcast()   // several threads wait on this condition (encoder, writer, flushers)
    }

    /// Blocks until everything enqueued before the call is committed (or `timeoutSeconds` passes).
    @discardableResult
    func flush(timeoutSeconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while !queue.isEmpty || encoding || encoded != nil || writing {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Writes what is queued, then stops the thread. Idempotent.
    func shutdown(timeoutSeconds: Double = 30) {
        flush(timeoutSeconds: timeoutSeconds)
        condition.lock()
        stopping = true
        condition.broadcast()
        let deadline = Date().addingTimeInterval(5)
        while !(stopped && encoderDone), condition.wait(until: deadline) {}
        let lost = queue.count
        condition.unlock()
        if lost > 0 {
            logger.critical("store writer stopped with unwritten steps", metadata: ["steps": "\(lost)"])
        }
    }

    deinit { shutdown(timeoutSeconds: 5) }

    /// No bound on statements (the writer waits out an outage), but a backend whose writer was cut
    /// off mid-transaction must not keep its row locks for hours: a claim on another server waits
    /// for the lease rows this transaction holds FOR SHARE.
    static let connectionConfig = PGConnectionConfig.default.detectingDeadPeers(withinSeconds: 10)

    // MARK: Writer threads

    /// Stage 1: takes everything queued and folds and encodes it (Swift work), while stage 2 is
    /// still committing the previous drain (PostgreSQL work), so the two overlap.
    private func encodeLoop() {
        while true {
            condition.lock()
            while !stopping && (queue.isEmpty || encoded != nil) { condition.wait() }
            if stopping {
                encoderDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let (drain, left) = DrainSelection.split(queue, heavyLimit: StoreWriter.heavyStepsPerDrain,
                                                     heavyLimitBesideLight: StoreWriter.heavyStepsBesideLightSteps,
                                                     conversation: \.conversationID, isHeavy: \.step.isHeavyForDrain)
            queue = left
            encoding = true
            condition.unlock()
            let changes = ChangeSet(drain.map { ($0.conversationID, $0.step) })
            condition.lock()
            encoded = (drain, changes)
            encoding = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Stage 2: commits encoded drains in order, retrying on failure, then reports to the sessions.
    private func run() {
        while true {
            condition.lock()
            while encoded == nil && !(stopping && encoderDone) { condition.wait() }
            guard let next = encoded else {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            encoded = nil
            writing = true
            condition.broadcast()
            condition.unlock()

            var drain = next.drain
            var changes = next.changes
            var backoffSeconds = 0.05
            var committed = false
            while true {
                do {
                    try write(changes)
                    committed = true
                    break
                } catch let fenced as StaleFences {
                    // Their sessions lost the conversation: refused for good, and the rest written at once.
                    drain = refuseStale(drain, fenced)
                    changes = ChangeSet(drain.map { ($0.conversationID, $0.step) })
                    if drain.isEmpty {
                        committed = true
                        break
                    }
                } catch where Self.isDataError(error) && !drain.isEmpty {
                    // Retrying cannot help a step PostgreSQL refuses for its content; write the steps
                    // one by one so only the offending one is rejected (reported as such). Steps a
                    // transient failure interrupted are retried in order like any failed drain.
                    let outcome = writeOneByOne(drain)
                    for item in outcome.committed { item.completion(.success(())) }
                    if outcome.unwritten.isEmpty {
                        drain = []
                        committed = true
                        break
                    }
                    drain = outcome.unwritten
                    changes = ChangeSet(drain.map { ($0.conversationID, $0.step) })
                    if failedAndStopping(&drain, error: outcome.failure ?? error, backoffSeconds: &backoffSeconds) { break }
                } catch {
                    if failedAndStopping(&drain, error: error, backoffSeconds: &backoffSeconds) { break }
                }
            }
            // Completions run before the drain counts as done, so `flush()` returning means every
            // step before it has been reported.
            if committed {
                for item in drain { item.completion(.success(())) }
            }
            condition.lock()
            writing = false
            // Committed or rejected, each step of the drain is done; on a stop they went back to the queue.
            if committed { waitingSteps -= next.drain.count }
            if !committed { stopped = true }
            condition.broadcast()
            condition.unlock()
            guard committed else { return }
        }
    }

    /// A drain that could not be written (PostgreSQL unavailable): each step's completion hears of it
    /// once, then after a backoff the writer reconnects and the caller tries again. Returns true when
    /// the writer is stopping instead (the steps go back to the front of the queue, in order).
    private func failedAndStopping(_ drain: inout [Pending], error: any Error, backoffSeconds: inout Double) -> Bool {
        logger.error("store write failed; will retry", metadata: ["error": "\(error)", "steps": "\(drain.count)"])
        for index in drain.indices where !drain[index].failureReported {
            drain[index].failureReported = true
            drain[index].completion(.failure(error))
        }
        condition.lock()
        let giveUp = stopping
        if giveUp { queue.insert(contentsOf: drain, at: 0) }
        condition.unlock()
        if giveUp { return true }
        Thread.sleep(forTimeInterval: backoffSeconds)
        backoffSeconds = min(backoffSeconds * 2, 2)
        reconnectIfNeeded()
        return false
    }

    /// SQLSTATE classes 22 (data exception) and 23 (integrity violation), and values libpq cannot send.
    static func isDataError(_ error: any Error) -> Bool {
        guard let error = error as? PGError else { return false }
        if error.code == .encodeFailed { return true }
        return error.sqlState.map { $0.hasPrefix("22") || $0.hasPrefix("23") } ?? false
    }

    /// A step PostgreSQL refused, with what it named (table, column) but none of its text.
    static func rejection(_ error: any Error) -> StoreError {
        guard let error = error as? PGError else {
            return StoreError(code: .rejected, message: "rejected by PostgreSQL: \(error)")
        }
        var target: String?
        if let table = error.table {
            target = table + (error.column.map { " (column \($0))" } ?? "")
        } else if error.code == .encodeFailed {
            target = "a text value"
        }
        return StoreError(code: .rejected, message: "rejected by PostgreSQL: \(error)", refusedTarget: target)
    }

    /// Writes each step in its own transaction, in order. A step refused for its content is reported
    /// rejected; a transient failure stops the pass, and that step and the ones after it are
    /// returned unwritten (with the failure) to be retried.
    private func writeOneByOne(_ drain: [Pending]) -> (committed: [Pending], unwritten: [Pending], failure: (any Error)?) {
        var committed: [Pending] = []
        for (position, item) in drain.enumerated() {
            do {
                try write(ChangeSet([(item.conversationID, item.step)]))
                committed.append(item)
            } catch where Self.isDataError(error) {
                logger.error("store rejected a step", metadata: ["conversation": "\(item.conversationID)", "error": "\(error)"])
                item.completion(.failure(Self.rejection(error)))
            } catch let fenced as StaleFences {
                _ = refuseStale([item], fenced)
            } catch {
                return (committed, Array(drain[position...]), error)
            }
        }
        return (committed, [], nil)
    }

    /// Refuses the steps of `drain` whose epoch is stale (`StoreError.fenced`); returns the others, in order.
    private func refuseStale(_ drain: [Pending], _ fenced: StaleFences) -> [Pending] {
        var kept: [Pending] = []
        for item in drain {
            if let fence = item.step.fence, fenced.stale.contains(FencedConversation(conversationID: item.conversationID, fence: fence)) {
                item.completion(.failure(StoreError(code: .fenced,
                    message: "conversation \(item.conversationID) was claimed by another session since epoch \(fence.epoch); nothing of the step was written")))
            } else {
                kept.append(item)
            }
        }
        logger.warning("store refused steps of sessions that lost their conversation", metadata: [
            "conversations": "\(fenced.stale.map(\.conversationID).sorted())", "steps": "\(drain.count - kept.count)"])
        return kept
    }

    private func reconnectIfNeeded() {
        if let connection, connection.isConnected { return }
        do {
            if let current = connection {
                try current.reset()
                stagingReady = false   // temporary tables die with the old session
            } else {
                connection = try PGConnection(connectionString: connectionString, config: Self.connectionConfig)
            }
        } catch {
            connection = nil
            logger.warning("store reconnect failed", metadata: ["error": "\(error)"])
        }
    }

    private func write(_ changes: ChangeSet) throws {
        guard let connection else {
            reconnectIfNeeded()
            throw StoreError(code: .writeFailed, message: "no database connection")
        }
        if !stagingReady {
            try connection.execute(ChangeSet.createStagingTable)
            stagingReady = true
        }
        let started = ContinuousClock.now
        try connection.transaction { connection in try changes.write(to: connection) }
        let elapsed = (ContinuousClock.now - started).components
        observer?.committed(seconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
        condition.lock()
        commits += 1
        wordRows += changes.wordUpsertCount
        condition.unlock()
    }
}

/// The store writer: conversations are spread over `shards` writer connections by a hash of their
/// id, so a conversation's steps keep their order while PostgreSQL works on two drains at once
/// (one backend saturates a core at about 95,000 word rows per second on this machine).
public final class StoreWriter: Sendable {
    public typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    private let shards: [StoreWriterShard]

    /// Session ends a drain takes at most (`DrainSelection`). Uncapped, when 500 sessions ended within
    /// a second on 2 cores, drains of 20–90 steps took 100–140 ms to commit; capped at 8, that burst's
    /// drains took 9 ms at p50 and 86 ms at p99 (docs/benchmarks.md).
    static let heavyStepsPerDrain = 8
    /// Session ends a drain takes at most while light steps (words waiting for their update) are
    /// queued too. With 8, at 500 device sessions of 30 s the words sent with the stop waited
    /// 55-62 ms at the median behind ends in their drains; with 2, 44-45 ms, and the ends catch up in
    /// drains of ends alone once the words are out (docs/benchmarks.md).
    static let heavyStepsBesideLightSteps = 2

    /// `observer` hears of every committed transaction (for metrics); it is called on a writer thread.
    public init(connectionString: String, shards: Int = 2, observer: (any StoreWriterObserver)? = nil, logger: Logger) throws {
        self.shards = try (0..<max(1, shards)).map { _ in
            try StoreWriterShard(connectionString: connectionString, observer: observer, logger: logger)
        }
    }

    /// Steps enqueued and not yet committed (or rejected), over all shards: what sessions wait for.
    public var queueDepth: Int {
        shards.reduce(0) { $0 + $1.queueDepth }
    }

    /// Queues a step; `completion` runs after the commit (see `StoreWriterShard`): on an outage it
    /// first runs with the error, and again with success once the queued step is committed.
    public func enqueue(_ step: PersistStep, conversationID: String, completion: @escaping Completion) {
        shard(for: conversationID).enqueue(step, conversationID: conversationID, completion: completion)
    }

    /// Blocks until everything enqueued before the call is committed and reported.
    @discardableResult
    public func flush(timeoutSeconds: Double = 30) -> Bool {
        shards.allSatisfy { $0.flush(timeoutSeconds: timeoutSeconds) }
    }

    public func shutdown(timeoutSeconds: Double = 30) {
        for shard in shards { shard.shutdown(timeoutSeconds: timeoutSeconds) }
    }

    /// Transactions committed and word rows written so far, over all shards.
    public var statistics: (commits: Int, wordRows: Int) {
        shards.map(\.statistics).reduce((0, 0)) { ($0.0 + $1.commits, $0.1 + $1.wordRows) }
    }

    private func shard(for conversationID: String) -> StoreWriterShard {
        // FNV-1a: stable across runs (Swift's hashValue is seeded per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in conversationID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return shards[Int(hash % UInt64(shards.count))]
    }
}
