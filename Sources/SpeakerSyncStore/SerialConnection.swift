import Foundation
import PostgresClient

/// One PostgreSQL connection used one statement at a time by several threads (`JobQueue`,
/// `ConversationLeases`), opened again on the next use after it was lost. A statement that fails is
/// not retried here: it may have committed before the connection broke (a claim, say), and running
/// it again would do it twice.
final class SerialConnection: @unchecked Sendable { // `connection` is used only under `lock`
    private let connectionString: String
    private let config: PGConnectionConfig
    private let lock = NSLock()
    private var connection: PGConnection?

    init(connectionString: String, config: PGConnectionConfig = .default) throws {
        self.connectionString = connectionString
        self.config = config
        connection = try PGConnection(connectionString: connectionString, config: config)
    }

    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if connection == nil || connection?.isConnected == false {
            connection = nil
            connection = try PGConnection(connectionString: connectionString, config: config)
        }
        return try body(connection!)
    }
}
