import Foundation

/// A fixed number of connections lent to one caller at a time, so readers on many threads (HTTP
/// routes, session starts) neither share one connection behind a lock nor open one each.
///
/// Connections are opened on first need and replaced when lost (a dropped server, a statement past
/// its deadline). A caller waits at most `checkoutTimeoutSeconds` for a free connection, then gets
/// `PGError.poolExhausted`: with a stopped server every lent connection may be waiting out its
/// query deadline, and a caller must hear of it rather than queue for ever.
public final class PGConnectionPool: @unchecked Sendable { // state guarded by `condition`
    public let connectionString: String
    public let size: Int
    public let connectionConfig: PGConnectionConfig
    public let checkoutTimeoutSeconds: Double

    private let condition = NSCondition()
    private var idle: [PGConnection] = []
    /// Connections lent out or being opened, plus idle ones.
    private var open = 0

    public init(connectionString: String, size: Int, connectionConfig: PGConnectionConfig = .interactive,
                checkoutTimeoutSeconds: Double = 10) {
        self.connectionString = connectionString
        self.size = max(1, size)
        self.connectionConfig = connectionConfig
        self.checkoutTimeoutSeconds = checkoutTimeoutSeconds
    }

    /// Opens one connection now, so a server that cannot reach PostgreSQL fails at start.
    public func prime() throws {
        let connection = try checkOut()
        checkIn(connection)
    }

    /// Runs `body` with a connection of its own. A connection lost before or during `body`
    /// (PostgreSQL restarted) is replaced and `body` runs once more on the new one; a statement
    /// that timed out is not retried (the server is not answering, a retry would double the wait).
    public func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        do {
            let value = try body(connection)
            checkIn(connection)
            return value
        } catch let error as PGError where error.code == .connectionFailed && !connection.isConnected {
            checkIn(connection)
            let fresh = try checkOut()
            do {
                let value = try body(fresh)
                checkIn(fresh)
                return value
            } catch {
                checkIn(fresh)
                throw error
            }
        } catch {
            checkIn(connection)
            throw error
        }
    }

    /// Connections open now (lent or idle), for tests and metrics.
    public var openCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return open
    }

    private func checkOut() throws -> PGConnection {
        let deadline = Date().addingTimeInterval(checkoutTimeoutSeconds)
        condition.lock()
        while idle.isEmpty && open >= size {
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw PGError(code: .poolExhausted, message: "no database connection became free within \(checkoutTimeoutSeconds) s")
            }
        }
        if let connection = idle.popLast() {
            condition.unlock()
            if connection.isConnected { return connection }
            // Lost while idle: open a new one in its place (the slot stays counted).
            return try openConnection()
        }
        open += 1
        condition.unlock()
        return try openConnection()
    }

    /// Opens a connection for a slot already counted in `open`; frees the slot when it fails.
    private func openConnection() throws -> PGConnection {
        do {
            return try PGConnection(connectionString: connectionString, config: connectionConfig)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: PGConnection) {
        condition.lock()
        if connection.isConnected {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
    }
}
