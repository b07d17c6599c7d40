import Foundation
import Logging

/// A private PostgreSQL cluster under a data folder, for running without a DATABASE_URL.
///
/// A data folder's cluster has exactly one owner: the process holding the exclusive lock on
/// `<data folder>.lock` (`ClusterLock`). `start()` takes the lock, runs initdb on first use (UTF8,
/// no locale), writes our settings (`listen_addresses = ''`: reachable only through a unix socket
/// inside the 0700 folder) and who may connect (`ClusterAuthentication`: never `trust`), stops a
/// server left running on the folder by no owner, starts `postgres` as a supervised child
/// (`PostmasterSupervisor`: restarted when it dies, stopped by the kernel when the owner dies),
/// waits until it accepts connections, sets up the application role and its database
/// (`ClusterRoles`) and returns a libpq connection string for that role.
///
/// Privileges: as root, initdb and the server run as a dedicated system user (`speakersync-pg`,
/// created when missing: `ClusterAccount`), since PostgreSQL refuses root; otherwise as this
/// process's user. The returned connection string names the application role (`speakersync_app`:
/// no superuser, no CREATEDB or CREATEROLE, owner of its database only) and the password file
/// (`passfile=<data folder>.pgpass`, 0600), never a password. The superuser is reached only by the
/// owner's operating-system user (`superuserConnectionString`, peer authentication). The children
/// get a curated environment (`ChildEnvironment`), none of this process's secrets.
///
/// A cluster an earlier SpeakerSync made (trust authentication, run as `nobody`, everything owned by
/// the superuser) is converted by the next start, its data kept: the folder is handed to the new
/// account, the authentication files rewritten before the server starts, the objects handed to the
/// application role.
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
    private let passwordFile: ClusterPasswordFile
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
        passwordFile = ClusterPasswordFile(dataDirectory: self.dataDirectory)
    }

    public convenience init(dataDirectory: String, config: EmbeddedPostgresConfig = .default, logger: Logger) {
        self.init(dataDirectory: URL(fileURLWithPath: dataDirectory), config: config, logger: logger)
    }

    deinit { stop() }

    /// The libpq connection string of the application role for `database` over the private socket;
    /// the password comes from `passwordFilePath`, which a process must be able to read (the
    /// owner's user).
    public func connectionString(database: String? = nil) -> String {
        socketParameters(database: database) + " user=\(PGConnection.quoteConnectionValue(config.applicationRole))"
            + " passfile=\(PGConnection.quoteConnectionValue(passwordFile.path))"
    }

    /// The superuser's connection string for `database` (default `postgres`): for administration
    /// (creating databases, as the tests do) by the owner's operating-system user only, whom peer
    /// authentication recognises; anyone else is refused. The server itself never uses it.
    public func superuserConnectionString(database: String = "postgres") -> String {
        socketParameters(database: database) + " user=\(PGConnection.quoteConnectionValue(config.superuser))"
    }

    private func socketParameters(database: String?) -> String {
        "host=\(PGConnection.quoteConnectionValue(dataDirectory.path)) port=\(config.port) "
            + "dbname=\(PGConnection.quoteConnectionValue(database ?? config.databaseName))"
    }

    /// The application role's password file (`<data folder>.pgpass`, 0600, libpq's format).
    public var passwordFilePath: String { passwordFile.path }

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
        dropPasswordVariable()
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
                // The owner creates the role and the database; until it has, this connection fails.
                if (try? PGConnection(connectionString: connectionString())) != nil {
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

    /// libpq prefers PGPASSWORD to the password file a connection string names: left set, it would
    /// stand in for the application role's password and every sign-in would fail. This process's
    /// connections to the cluster all go through the password file, so the variable is removed
    /// from its environment (and so from what any later child could inherit).
    private func dropPasswordVariable() {
        guard getenv("PGPASSWORD") != nil else { return }
        logger.warning("PGPASSWORD is set; the embedded PostgreSQL's role signs in with its password file, so PGPASSWORD is removed from this process's environment")
        unsetenv("PGPASSWORD")
    }

    /// With the lock held: prepares the folder and its authentication, clears a leftover server,
    /// starts a supervised one, waits until it accepts connections and sets up the application
    /// role and its database.
    private func startOwnedServer() throws -> PostmasterSupervisor {
        let binDirectory = try folder.resolveBinDirectory()
        let runAs = try ClusterAccount.forCurrentProcess(config, logger: logger)
        let owner = try SystemUser.current()
        try folder.prepare(runAs: runAs)
        let password = try passwordFile.loadOrCreate(role: config.applicationRole, logger: logger)
        try folder.initializeIfNeeded(binDirectory: binDirectory, runAs: runAs, logger: logger)
        try folder.writeServerSettings(runAs: runAs)
        let trustRules = try folder.writeAuthentication(ownerUser: owner.name, runAs: runAs)
        if !trustRules.isEmpty {
            logger.notice("""
                the embedded PostgreSQL trusted local connections; from now on the superuser is reached only by this \
                server's user (peer) and every other role by its password (SCRAM-SHA-256)
                """,
                          metadata: ["dataDirectory": "\(dataDirectory.path)", "replaced_rules": "\(trustRules.joined(separator: "; "))"])
        }
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
        logger.info("starting embedded PostgreSQL", metadata: [
            "dataDirectory": "\(dataDirectory.path)", "pid": "\(pid)", "user": "\(runAs?.user ?? owner.name)"])
        do {
            let admin = try waitUntilAccepting(supervisor)
            supervisor.markRunning()
            try ClusterRoles(config: config, logger: logger).apply(admin: admin, password: password) {
                try PGConnection(connectionString: superuserConnectionString(database: config.databaseName))
            }
            try checkApplicationRole()
        } catch {
            supervisor.stop(timeoutSeconds: config.stopTimeoutSeconds)
            throw error
        }
        return supervisor
    }

    /// The application role signs in with the password file and is no superuser: what the server
    /// will rely on, checked before anyone is told the cluster is ready.
    private func checkApplicationRole() throws {
        let connection: PGConnection
        do {
            connection = try PGConnection(connectionString: connectionString())
        } catch let error as PGError {
            throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL refused its application role "
                          + "\(config.applicationRole) with the password in \(passwordFile.path): \(error.message)")
        }
        let superuser = try connection.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0]
            .decode(Bool.self, column: "rolsuper")
        guard !superuser else {
            throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL's application role \(config.applicationRole) is a superuser")
        }
    }

    /// Polls a connection (the server answers once recovery is done) until the start timeout.
    private func waitUntilAccepting(_ supervisor: PostmasterSupervisor) throws -> PGConnection {
        let deadline = Date(timeIntervalSinceNow: TimeInterval(config.startTimeoutSeconds))
        while true {
            if let reason = supervisor.failure {
                throw PGError(code: .clusterFailed, message: "\(reason): \(folder.serverLogTail())")
            }
            do {
                return try PGConnection(connectionString: superuserConnectionString())
            } catch let error as PGError where error.message.contains("authentication failed") {
                // Refused, not unready: waiting will not change who this process runs as.
                throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL refused its superuser to this process's user: "
                              + "\(error.message)")
            } catch {}
            guard Date() < deadline else {
                throw PGError(code: .clusterFailed, message: "the embedded PostgreSQL did not accept connections within "
                              + "\(config.startTimeoutSeconds) s: \(folder.serverLogTail())")
            }
            usleep(100_000)
        }
    }
}
