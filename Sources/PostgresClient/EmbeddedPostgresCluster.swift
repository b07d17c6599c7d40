import Foundation
import Logging

/// A private PostgreSQL cluster under a data folder, for running without a DATABASE_URL.
///
/// A data folder's cluster has exactly one owner: the process holding the exclusive lock on
/// `<data folder>.lock` (`ClusterLock`). `start()` takes the lock, runs initdb on first use (UTF8,
/// no locale, trust auth), writes our settings (`listen_addresses = ''`: reachable only through a
/// unix socket inside the folder), stops a server left running on the folder by no owner, starts
/// `postgres` as a supervised child (`PostmasterSupervisor`: restarted when it dies, stopped by the
/// kernel when the owner dies), waits until it accepts connections, creates the database and
/// returns a libpq connection string. As root, initdb and the server run as `nobody` (via setpriv),
/// since PostgreSQL refuses to run as root.
///
/// A process that cannot take the lock does not own the cluster and never starts or stops it:
/// `start()` throws `ClusterInUseError` (code `cluster_in_use`, with the owner's pid), and
/// `startOrAttach()` connects to the owner's server as a client instead (`role == .client`), whose
/// `stop()` leaves it running. `stop()` (and deinit) of the owner ends supervision, stops the
/// server (fast shutdown) and releases the lock. Server output goes to `server.log` in the folder.
///
/// `@unchecked Sendable`: every mutable field is guarded by `lock`, held through start and stop.
public final class EmbeddedPostgresCluster: @unchecked Sendable {
    /// What this object is to the folder's cluster once started.
    public enum Role: Sendable, Equatable {
        /// Holds the folder's lock and runs the server; `stop()` stops it.
        case owner
        /// Connected to the server another process owns; `stop()` leaves it running.
        case client(ownerPID: pid_t?)
    }

    public let dataDirectory: URL
    public let config: EmbeddedPostgresConfig
    private let logger: Logger
    private let folder: ClusterFolder
    private let lock = NSLock()
    private var currentRole: Role?
    private var ownership: ClusterLock?
    private var supervisor: PostmasterSupervisor?
    /// Restarts counted by supervisors of earlier starts of this object.
    private var earlierRestarts = 0

    public init(dataDirectory: URL, config: EmbeddedPostgresConfig = .default, logger: Logger) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.config = config
        self.logger = logger
        folder = ClusterFolder(dataDirectory: self.dataDirectory, config: config)
    }

    public convenience init(dataDirectory: String, config: EmbeddedPostgresConfig = .default, logger: Logger) {
        self.init(dataDirectory: URL(fileURLWithPath: dataDirectory), config: config, logger: logger)
    }

    deinit { stop() }

    /// The libpq connection string for `database` over the private socket.
    public func connectionString(database: String? = nil) -> String {
        "host=\(PGConnection.quoteConnectionValue(dataDirectory.path)) port=\(config.port) "
            + "user=\(PGConnection.quoteConnectionValue(config.superuser)) "
            + "dbname=\(PGConnection.quoteConnectionValue(database ?? config.databaseName))"
    }

    /// The file whose lock makes a process the owner (`<data folder>.lock`).
    public var lockFilePath: String { ClusterLock.path(forDataDirectory: dataDirectory) }

    /// Owner or client once started; nil before `start()` and after `stop()`.
    public var role: Role? { lock.withLock { currentRole } }

    /// The owner's running server (nil for a client, or while it is being restarted).
    public var postmasterPID: pid_t? { lock.withLock { supervisor?.pid } }

    /// How many times this owner started its server again after it died (for tests and metrics).
    public var restartCount: Int { lock.withLock { earlierRestarts + (supervisor?.restartCount ?? 0) } }

    /// Becomes the cluster's owner: initializes it (first time), starts it and creates the database.
    /// Returns the connection string for the database. Throws `ClusterInUseError` when another
    /// process owns the folder.
    @discardableResult
    public func start() throws -> String {
        try lock.withLock { try startLocked(attachToOwner: false) }
    }

    /// Like `start()`, but when another process owns the folder, connects to its server as a
    /// client (waiting up to `startTimeoutSeconds` for it to accept connections) and creates the
    /// database there if missing. A client never starts, restarts or stops that server; should
    /// the owner let go of the folder while this waits, this becomes the owner.
    @discardableResult
    public func startOrAttach() throws -> String {
        try lock.withLock { try startLocked(attachToOwner: true) }
    }

    /// The owner stops supervising, then stops the server (fast shutdown, waiting for it to exit)
    /// and releases the folder; a client only forgets it. Safe to call more than once.
    public func stop() {
        lock.withLock {
            guard let role = currentRole else { return }
            currentRole = nil
            guard role == .owner else { return }
            supervisor?.stop(timeoutSeconds: config.stopTimeoutSeconds)
            earlierRestarts += supervisor?.restartCount ?? 0
            supervisor = nil
            ownership?.release()
            ownership = nil
            logger.info("stopped embedded PostgreSQL", metadata: ["dataDirectory": "\(dataDirectory.path)"])
        }
    }

    // MARK: Steps

    private func startLocked(attachToOwner: Bool) throws -> String {
        if currentRole != nil { return connectionString() }
        try folder.checkSocketPath()
        let deadline = Date(timeIntervalSinceNow: TimeInterval(config.startTimeoutSeconds))
        while true {
            switch try ClusterLock.tryAcquire(path: lockFilePath) {
            case .acquired(let ownership):
                do {
                    supervisor = try startOwnedServer()
                } catch {
                    ownership.release()
                    throw error
                }
                self.ownership = ownership
                currentRole = .owner
                return connectionString()
            case .held(let ownerPID):
                guard attachToOwner else {
                    throw ClusterInUseError(dataDirectory: dataDirectory.path, ownerPID: ownerPID, connectionString: connectionString())
                }
                if let admin = try? PGConnection(connectionString: connectionString(database: "postgres")) {
                    try createDatabaseIfNeeded(admin)
                    logger.info("connected to the embedded PostgreSQL another process owns; it keeps running after this one stops",
                                metadata: ["dataDirectory": "\(dataDirectory.path)", "owner_pid": "\(ownerPID.map(String.init) ?? "?")"])
                    currentRole = .client(ownerPID: ownerPID)
                    return connectionString()
                }
                guard Date() < deadline else {
                    throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL in \(dataDirectory.path), owned by "
                                  + "\(ownerPID.map { "pid \($0)" } ?? "another process"), did not accept connections within \(config.startTimeoutSeconds) s")
                }
                usleep(200_000)
            }
        }
    }

    /// With the lock held: prepares the folder, clears a leftover server, starts a supervised one,
    /// waits until it accepts connections and creates the database.
    private func startOwnedServer() throws -> PostmasterSupervisor {
        let binDirectory = try folder.resolveBinDirectory()
        let runAs = try ClusterAccount.forCurrentProcess(config)
        try folder.prepare(runAs: runAs)
        try folder.initializeIfNeeded(binDirectory: binDirectory, runAs: runAs, logger: logger)
        try folder.writeServerSettings(runAs: runAs)
        if let leftover = LeftoverPostmaster.find(in: dataDirectory) {
            logger.warning("stopping the PostgreSQL left running on the data directory by no owner; this process starts its own",
                           metadata: ["dataDirectory": "\(dataDirectory.path)", "pid": "\(leftover.pid)"])
            try leftover.stop(timeoutSeconds: config.stopTimeoutSeconds, logger: logger)
        }
        let launch = PostmasterLaunch(binDirectory: binDirectory, dataDirectory: dataDirectory.path, runAs: runAs,
                                      logPath: folder.prepareServerLog(runAs: runAs))
        if !launch.hasParentDeathSignal {
            logger.warning("\(PostmasterLaunch.setpriv) not found: the embedded PostgreSQL would outlive this process if it died")
        }
        let supervisor = PostmasterSupervisor(launch: launch, logger: logger)
        let pid = try supervisor.start()
        logger.info("starting embedded PostgreSQL", metadata: ["dataDirectory": "\(dataDirectory.path)", "pid": "\(pid)"])
        do {
            let admin = try waitUntilAccepting(supervisor)
            supervisor.markRunning()
            try createDatabaseIfNeeded(admin)
        } catch {
            supervisor.stop(timeoutSeconds: config.stopTimeoutSeconds)
            throw error
        }
        return supervisor
    }

    /// Polls a connection (the server answers once recovery is done) until the start timeout.
    private func waitUntilAccepting(_ supervisor: PostmasterSupervisor) throws -> PGConnection {
        let deadline = Date(timeIntervalSinceNow: TimeInterval(config.startTimeoutSeconds))
        while true {
            if let reason = supervisor.failure {
                throw PGError(code: .clusterFailed, message: "\(reason): \(folder.serverLogTail())")
            }
            if let admin = try? PGConnection(connectionString: connectionString(database: "postgres")) { return admin }
            guard Date() < deadline else {
                throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL did not accept connections within "
                              + "\(config.startTimeoutSeconds) s: \(folder.serverLogTail())")
            }
            usleep(100_000)
        }
    }

    private func createDatabaseIfNeeded(_ admin: PGConnection) throws {
        let exists = try admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [config.databaseName])
        guard exists.rowCount == 0 else { return }
        let identifier = "\"" + config.databaseName.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        do {
            try admin.execute("CREATE DATABASE \(identifier) ENCODING 'UTF8' TEMPLATE template0")
        } catch let error as PGError where error.sqlState == "42P04" {
            // created concurrently: fine
        }
        logger.info("created database", metadata: ["database": "\(config.databaseName)"])
    }
}
