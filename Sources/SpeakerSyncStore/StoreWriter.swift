import Foundation
import Logging
import PostgresClient

/// Writes sessions' steps to PostgreSQL off the WebSocket and session threads.
///
/// Any thread enqueues; one writer thread owns one connection. Each time it wakes it takes
/// everything queued (across all conversations), folds it into one set of changes per table — the
/// later step wins per primary key, so order within a conversation is kept — and writes that in one
/// transaction with a handful of `unnest($n::type[])` statements (bind parameters only), then calls
/// the completions. So the cost per commit is shared by every session that wrote in the meantime.
///
/// When a write fails, each step's completion is called once with the error (the session tells its
/// device the words are not stored yet); the steps stay queued and are retried with backoff on a
/// fresh connection; once committed, the completions are called again with success. Nothing a
/// completion reported as stored is lost; nothing is dropped silently. A long outage keeps the
/// queued steps in memory.
public final class StoreWriter: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    private struct Pending {
        var conversationID: String
        var step: PersistStep
        var completion: Completion
        var failureReported = false
    }

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [Pending] = []
    private var writing = false
    private var stopping = false
    private var stopped = false

    // Only used on the writer thread.
    private var connection: PGConnection?
    private let connectionString: String
    private let logger: Logger

    private var commits = 0
    private var wordRows = 0

    /// Figures for benchmarks: transactions committed and word rows written so far.
    public var statistics: (commits: Int, wordRows: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (commits, wordRows)
    }

    public init(connectionString: String, logger: Logger) throws {
        self.connectionString = connectionString
        self.logger = logger
        self.connection = try PGConnection(connectionString: connectionString)
        let thread = Thread { [self] in run() }
        thread.name = "speakersync.store-writer"
        thread.start()
    }

    /// Queues a step; `completion` runs on the writer thread after the commit (see the type's notes).
    public func enqueue(_ step: PersistStep, conversationID: String, completion: @escaping Completion) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            completion(.failure(StoreError(code: .shutDown, message: "the store writer is shut down")))
            return
        }
        queue.append(Pending(conversationID: conversationID, step: step, completion: completion))
        condition.signal()
    }

    /// Blocks until everything enqueued before the call is committed (or `timeoutSeconds` passes).
    @discardableResult
    public func flush(timeoutSeconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while !queue.isEmpty || writing {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Writes what is queued, then stops the thread. Idempotent.
    public func shutdown(timeoutSeconds: Double = 30) {
        flush(timeoutSeconds: timeoutSeconds)
        condition.lock()
        stopping = true
        condition.broadcast()
        let deadline = Date().addingTimeInterval(5)
        while !stopped, condition.wait(until: deadline) {}
        let lost = queue.count
        condition.unlock()
        if lost > 0 {
            logger.critical("store writer stopped with unwritten steps", metadata: ["steps": "\(lost)"])
        }
    }

    deinit { shutdown(timeoutSeconds: 5) }

    // MARK: Writer thread

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping && (queue.isEmpty || connection == nil) {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var drain = queue
            queue.removeAll(keepingCapacity: true)
            writing = true
            condition.unlock()

            var backoffSeconds = 0.05
            var committed = false
            while true {
                do {
                    try write(drain)
                    committed = true
                    break
                } catch where Self.isDataError(error) && !drain.isEmpty {
                    // Retrying cannot help a step PostgreSQL refuses for its content; write the steps
                    // one by one so only the offending one is rejected (and reported as not stored).
                    drain = writeOneByOne(drain)
                    committed = true
                    break
                } catch {
                    logger.error("store write failed; will retry", metadata: ["error": "\(error)", "steps": "\(drain.count)"])
                    for index in drain.indices where !drain[index].failureReported {
                        drain[index].failureReported = true
                        drain[index].completion(.failure(error))
                    }
                    condition.lock()
                    let giveUp = stopping
                    if giveUp { queue.insert(contentsOf: drain, at: 0) }
                    condition.unlock()
                    if giveUp { break }
                    Thread.sleep(forTimeInterval: backoffSeconds)
                    backoffSeconds = min(backoffSeconds * 2, 2)
                    reconnectIfNeeded()
                }
            }
            // Completions run before the drain counts as done, so `flush()` returning means every
            // step before it has been reported.
            if committed {
                for item in drain { item.completion(.success(())) }
            }
            condition.lock()
            writing = false
            if !committed { stopped = true }
            condition.broadcast()
            condition.unlock()
            guard committed else { return }
        }
    }

    /// SQLSTATE classes 22 (data exception) and 23 (integrity violation), and values libpq cannot send.
    static func isDataError(_ error: any Error) -> Bool {
        guard let error = error as? PGError else { return false }
        if error.code == .encodeFailed { return true }
        return error.sqlState.map { $0.hasPrefix("22") || $0.hasPrefix("23") } ?? false
    }

    /// Writes each step in its own transaction; returns the steps that were committed.
    private func writeOneByOne(_ drain: [Pending]) -> [Pending] {
        var committed: [Pending] = []
        for item in drain {
            do {
                try write([item])
                committed.append(item)
            } catch {
                logger.error("store rejected a step", metadata: ["conversation": "\(item.conversationID)", "error": "\(error)"])
                item.completion(.failure(StoreError(code: .writeFailed, message: "rejected by PostgreSQL: \(error)")))
            }
        }
        return committed
    }

    private func reconnectIfNeeded() {
        if let connection, connection.isConnected { return }
        do {
            if let connection { try connection.reset() } else { connection = try PGConnection(connectionString: connectionString) }
        } catch {
            connection = nil
            logger.warning("store reconnect failed", metadata: ["error": "\(error)"])
        }
    }

    private func write(_ drain: [Pending]) throws {
        guard let connection else {
            reconnectIfNeeded()
            throw StoreError(code: .writeFailed, message: "no database connection")
        }
        let changes = ChangeSet(drain.map { ($0.conversationID, $0.step) })
        try connection.transaction { connection in try changes.write(to: connection) }
        condition.lock()
        commits += 1
        wordRows += changes.wordUpserts.count
        condition.unlock()
    }
}
