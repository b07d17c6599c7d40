import Foundation
import Logging
import PostgresClient

/// This server's claim to the conversations it runs, so that a server starting up marks as
/// interrupted only those a server that died left `active`.
///
/// Advisory locks belong to one database, like the sequence and the conversations: servers on other
/// databases of the same cluster neither see nor disturb each other.
///
/// At start the server takes a number from the `server_instances` sequence and holds the
/// session-level advisory lock (`lockClass`, number) on a connection of its own; its sessions write
/// the number into their conversations (`server_instance`). A server that dies loses the lock with
/// its connection. `sweepOrphans` then marks interrupted every active conversation whose server holds
/// no lock, which is correct with several servers on one database and after a crash of any of them.
/// If the lease connection breaks while the server runs (PostgreSQL restarted), a starting server may
/// sweep this one's active conversations; its sessions write `active` again with their next step
/// (at most 5 s of audio later), and `renew` takes the lock back.
public final class ServerLease: @unchecked Sendable {
    /// 'SSYC' in ASCII: the advisory lock class of SpeakerSync servers.
    public static let lockClass: Int32 = 1_397_965_635
    public let instance: Int
    private let connectionString: String
    private let logger: Logger
    private let lock = NSLock()
    private var connection: PGConnection?

    public init(connectionString: String, logger: Logger) throws {
        self.connectionString = connectionString
        self.logger = logger
        let connection = try PGConnection(connectionString: connectionString)
        instance = try connection.query("SELECT nextval('server_instances')::int AS instance").rows[0].decode(Int.self, column: "instance")
        try connection.execute("SELECT pg_advisory_lock($1, $2)", [Self.lockClass, Int32(instance)])
        self.connection = connection
    }

    /// Marks interrupted the active conversations whose server is gone; returns how many.
    @discardableResult
    public func sweepOrphans(reason: String = "the server running its session stopped before the session ended") throws -> Int {
        try withConnection { connection in
            try connection.execute("""
                UPDATE conversations c
                SET status = 'interrupted', status_reason = $2, ended_at = coalesce(c.ended_at, now()), updated_at = now()
                WHERE c.status = 'active'
                  AND NOT EXISTS (
                      SELECT 1 FROM pg_locks l
                      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        AND l.classid = $1::int::oid AND l.objid = c.server_instance::oid)
                """, [Self.lockClass, reason])
        }
    }

    /// Reconnects and takes the lock again if the lease connection was lost. Cheap when it was not.
    public func renew() {
        do {
            try withConnection { connection in try connection.execute("SELECT 1") }
        } catch {
            logger.warning("server lease connection lost; retrying later", metadata: ["error": "\(error)"])
        }
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if let connection, connection.isConnected {
            do {
                return try body(connection)
            } catch let error as PGError where error.code == .connectionFailed {
                self.connection = nil
            }
        }
        let fresh = try PGConnection(connectionString: connectionString)
        try fresh.execute("SELECT pg_advisory_lock($1, $2)", [Self.lockClass, Int32(instance)])
        connection = fresh
        logger.info("server lease taken again", metadata: ["server_instance": "\(instance)"])
        return try body(fresh)
    }
}
