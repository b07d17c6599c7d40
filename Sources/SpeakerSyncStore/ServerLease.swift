import Foundation
import Logging
import PostgresClient

/// This server's place in the fleet: a number, an advisory lock, and a lease with an expiry.
///
/// Advisory locks belong to one database, like the sequence and the conversations: servers on other
/// databases of the same cluster neither see nor disturb each other.
///
/// At start the server takes a number from the `server_instances` sequence and holds the
/// session-level advisory lock (`lockClass`, number) on a connection of its own; its sessions write
/// the number into their conversations (`server_instance`). A server that dies loses the lock with
/// its connection. `sweepOrphans` then marks interrupted every active conversation whose server holds
/// no lock, which is correct with several servers on one database and after a crash of any of them.
///
/// The lock alone cannot tell a paused or partitioned server from a live one (its connection stays
/// open), so the server also holds a lease in `fleet_servers` (migration 0010) that it renews every
/// quarter of `leaseSeconds`. Expiry is judged by PostgreSQL's clock, the one clock every server
/// shares. A server is live for the fleet while it holds both; a conversation whose server is not
/// live may be claimed by another (`ConversationLeases`). The server judges its own lease by its
/// monotonic clock from the moment it *sent* its last successful renewal, which is never later than
/// PostgreSQL's view of it, so it gives its sessions up no later than the fleet may take them.
public final class ServerLease: @unchecked Sendable { // `connection` and `lastRenewal` are used only under `lock`
    /// 'SSYC' in ASCII: the advisory lock class of SpeakerSync servers.
    public static let lockClass: Int32 = 1_397_965_635
    public let instance: Int
    public let leaseSeconds: Double
    private let connectionString: String
    private let address: String
    private let version: String
    private let logger: Logger
    private let lock = NSLock()
    private var connection: PGConnection?
    private var lastRenewal: ContinuousClock.Instant
    private var stopping = false
    private var peerCount = 0

    /// SQL that is true when the server named by the expression `column` is live for the fleet: its
    /// lease unexpired and its advisory lock held (used inline by `ConversationLeases`).
    public static func isLive(_ column: String) -> String {
        """
        (EXISTS (SELECT 1 FROM fleet_servers fs WHERE fs.server_instance = \(column) AND fs.lease_expires_at > now())
         AND \(holdsLock(column)))
        """
    }

    /// SQL that is true when the server numbered by the expression `instance` holds its advisory lock
    /// in this database (its lease connection is alive as far as PostgreSQL knows). `lockClass`: the
    /// lock class as SQL (a bind parameter, or the constant).
    public static func holdsLock(_ instance: String, lockClass: String = "\(ServerLease.lockClass)") -> String {
        "EXISTS (SELECT 1 FROM pg_locks pl WHERE \(isLeaseLock("pl", of: instance, lockClass: lockClass)))"
    }

    /// SQL that is true when the `pg_locks` row `row` is the granted lease lock of server `instance`
    /// in this database.
    static func isLeaseLock(_ row: String, of instance: String, lockClass: String = "\(ServerLease.lockClass)") -> String {
        """
        \(row).locktype = 'advisory' AND \(row).granted AND \(row).objsubid = 2
          AND \(row).database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND \(row).classid = (\(lockClass))::oid AND \(row).objid = (\(instance))::oid
        """
    }

    public init(connectionString: String, leaseSeconds: Double = 10, address: String = "", version: String = "", logger: Logger) throws {
        self.connectionString = connectionString
        self.leaseSeconds = leaseSeconds
        self.address = address
        self.version = version
        self.logger = logger
        let connection = try PGConnection(connectionString: connectionString, config: Self.connectionConfig(leaseSeconds))
        instance = try connection.query("SELECT nextval('server_instances')::int AS instance").rows[0].decode(Int.self, column: "instance")
        try connection.execute("SELECT pg_advisory_lock($1, $2)", [Self.lockClass, Int32(instance)])
        lastRenewal = .now
        self.connection = connection
        try withConnection { try self.writeLease($0) }
    }

    /// A renewal that hangs (a partition drops packets, so TCP waits for minutes) must not outlast the
    /// lease it renews.
    private static func connectionConfig(_ leaseSeconds: Double) -> PGConnectionConfig {
        PGConnectionConfig(connectTimeoutSeconds: max(2, Int(leaseSeconds / 3)), queryTimeoutSeconds: max(1, leaseSeconds / 3))
            .detectingDeadPeers(withinSeconds: Int(leaseSeconds.rounded(.up)))
    }

    /// Marks interrupted the active conversations whose server is gone; returns how many.
    @discardableResult
    public func sweepOrphans(reason: String = "the server running its session stopped before the session ended") throws -> Int {
        try withConnection { connection in
            try connection.execute("""
                UPDATE conversations c
                SET status = 'interrupted', status_reason = $2, ended_at = coalesce(c.ended_at, now()), updated_at = now()
                WHERE c.status = 'active' AND NOT \(Self.holdsLock("c.server_instance", lockClass: "$1::int"))
                """, [Self.lockClass, reason])
        }
    }

    /// Renews the lease (reconnecting and taking the lock again if the connection was lost). Cheap.
    /// Returns whether the renewal was written.
    @discardableResult
    public func renew() -> Bool {
        do {
            try withConnection { try self.writeLease($0) }
            return true
        } catch {
            logger.warning("server lease not renewed; retrying", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Seconds left of the lease as this server must assume it (counted from when its last successful
    /// renewal was sent); 0 or less: lapsed, the fleet may have taken its conversations.
    public var remainingSeconds: Double {
        lock.lock()
        defer { lock.unlock() }
        let elapsed = (ContinuousClock.now - lastRenewal).components
        return leaseSeconds - (Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
    }

    /// Other live servers (not stopping) on the database when the lease was last renewed. A server
    /// that was alone gains nothing from giving its sessions up when its lease lapses (no one is
    /// there to take them: PostgreSQL itself is most likely down), so it rides the outage out
    /// instead, as a single server always has; the fence keeps that safe if someone appears.
    public var peersAtLastRenewal: Int {
        lock.lock()
        defer { lock.unlock() }
        return peerCount
    }

    /// Draining: the fleet stops sending it new work (it stays live until it ends its lease).
    public func markStopping() {
        lock.lock()
        stopping = true
        lock.unlock()
        renew()
    }

    /// Ends the lease at an orderly stop, so the fleet need not wait for it to expire.
    public func end() {
        _ = try? withConnection { connection in
            try connection.execute("DELETE FROM fleet_servers WHERE server_instance = $1", [instance])
        }
    }

    /// Under `lock`. Also counts the other live servers, for `peersAtLastRenewal`.
    private func writeLease(_ connection: PGConnection) throws {
        let sent = ContinuousClock.now
        let peers = try connection.query("""
            WITH renewed AS (
                INSERT INTO fleet_servers AS s (server_instance, address, version, lease_expires_at, stopping)
                VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5)
                ON CONFLICT (server_instance) DO UPDATE
                  SET heartbeat_at = now(), lease_expires_at = excluded.lease_expires_at, stopping = excluded.stopping
                RETURNING 1)
            SELECT (SELECT count(*) FROM renewed)::int AS renewed,
                   (SELECT count(*) FROM fleet_servers
                    WHERE server_instance <> $1 AND lease_expires_at > now() AND NOT stopping)::int AS peers
            """, [instance, address, version, leaseSeconds, stopping]).rows[0].decode(Int.self, column: "peers")
        lastRenewal = sent
        peerCount = peers
    }

    /// After the lease connection was lost. PostgreSQL may not have noticed yet (a partition is silent
    /// both ways), so the old connection's backend can still hold this server's lock: waiting for it
    /// would queue behind a dead client (seen in the fleet harness: 50 waiters, the server never ready
    /// again). Nobody else ever takes this server's number, so the holder can only be that old
    /// connection: it is ended, and the lock taken without waiting.
    private func takeLockAgain(_ connection: PGConnection) throws {
        for _ in 0..<5 {
            let taken = try connection.query("SELECT pg_try_advisory_lock($1, $2) AS taken", [Self.lockClass, Int32(instance)])
                .rows[0].decode(Bool.self, column: "taken")
            if taken { return }
            let ended = try connection.execute("""
                SELECT pg_terminate_backend(l.pid) FROM pg_locks l
                WHERE l.pid <> pg_backend_pid() AND \(Self.isLeaseLock("l", of: "$2::int", lockClass: "$1::int"))
                """, [Self.lockClass, Int32(instance)])
            logger.warning("server lease: ended this server's earlier connection, which still held its lock", metadata: ["backends": "\(ended)"])
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw PGError(code: .connectionFailed, message: "the server lease lock is still held by an earlier connection of this server")
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if let connection, connection.isConnected {
            do {
                return try body(connection)
            } catch let error as PGError where error.code == .connectionFailed || error.code == .timedOut {
                self.connection = nil
            }
        }
        let fresh = try PGConnection(connectionString: connectionString, config: Self.connectionConfig(leaseSeconds))
        try takeLockAgain(fresh)
        connection = fresh
        logger.info("server lease connection taken again", metadata: ["server_instance": "\(instance)"])
        return try body(fresh)
    }
}
