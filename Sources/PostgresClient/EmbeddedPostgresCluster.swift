import Foundation
import Logging

/// Settings of a private PostgreSQL cluster.
public struct EmbeddedPostgresConfig: Sendable {
    /// Database created on first start and named in the returned connection string.
    public var databaseName: String
    /// Superuser created by initdb (trust authentication over the private socket only).
    public var superuser: String
    /// Port number; with `listen_addresses = ''` it only names the socket file.
    public var port: Int
    /// Folder with initdb/pg_ctl; `nil` finds it via `pg_config --bindir` or /usr/lib/postgresql/*/bin.
    public var binDirectory: URL?
    /// Account that runs the server when this process is root (PostgreSQL refuses root).
    public var unprivilegedUser: String
    public var unprivilegedGroup: String
    /// Seconds `pg_ctl start -w` waits for the server to accept connections.
    public var startTimeoutSeconds: Int
    /// PostgreSQL's `max_connections` (each SpeakerSync server holds a few: writer, readers, lease).
    public var maxConnections: Int

    public init(databaseName: String = "speakersync", superuser: String = "postgres", port: Int = 5432,
                binDirectory: URL? = nil, unprivilegedUser: String = "nobody",
                unprivilegedGroup: String = "nogroup", startTimeoutSeconds: Int = 60, maxConnections: Int = 100) {
        self.maxConnections = maxConnections
        self.databaseName = databaseName
        self.superuser = superuser
        self.port = port
        self.binDirectory = binDirectory
        self.unprivilegedUser = unprivilegedUser
        self.unprivilegedGroup = unprivilegedGroup
        self.startTimeoutSeconds = startTimeoutSeconds
    }

    public static let `default` = EmbeddedPostgresConfig()
}

/// A private PostgreSQL cluster under a data folder, for running without a DATABASE_URL.
///
/// `start()` runs initdb on first use (UTF8, no locale, trust auth), starts the server with
/// `listen_addresses = ''` so it is reachable only through a unix socket inside the data folder,
/// creates the database, and returns a libpq connection string. As root, initdb and the server
/// run as `nobody` (via setpriv), since PostgreSQL refuses to run as root.
///
/// A server already running on the same data folder (a previous run that crashed) is adopted;
/// a stale postmaster.pid is handled by PostgreSQL itself. The folder belongs to one server:
/// `stop()` and deinit stop the cluster with `pg_ctl stop -m fast` even when it was adopted.
/// Server output goes to `server.log` in the data folder.
public final class EmbeddedPostgresCluster: @unchecked Sendable {
    public let dataDirectory: URL
    public let config: EmbeddedPostgresConfig
    private let logger: Logger
    private let lock = NSLock()
    private var running = false

    public init(dataDirectory: URL, config: EmbeddedPostgresConfig = .default, logger: Logger) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.config = config
        self.logger = logger
    }

    public convenience init(dataDirectory: String, config: EmbeddedPostgresConfig = .default, logger: Logger) {
        self.init(dataDirectory: URL(fileURLWithPath: dataDirectory), config: config, logger: logger)
    }

    deinit { stopLocked() }

    /// The libpq connection string for `database` over the private socket.
    public func connectionString(database: String? = nil) -> String {
        "host=\(PGConnection.quoteConnectionValue(dataDirectory.path)) port=\(config.port) "
            + "user=\(PGConnection.quoteConnectionValue(config.superuser)) "
            + "dbname=\(PGConnection.quoteConnectionValue(database ?? config.databaseName))"
    }

    /// Initializes (first time), starts (or adopts) the cluster and creates the database.
    /// Returns the connection string for the database.
    @discardableResult
    public func start() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if running { return connectionString() }
        let path = dataDirectory.path
        // unix socket paths are limited to 107 bytes (sun_path).
        let socketPath = path + "/.s.PGSQL.\(config.port)"
        guard socketPath.utf8.count < 108 else {
            throw failure("data directory path is too long for a unix socket (\(socketPath.utf8.count) bytes > 107): \(path)")
        }
        let binDirectory = try resolveBinDirectory()
        let runAs = geteuid() == 0 ? try unprivilegedAccount() : nil
        try prepareDirectory(runAs: runAs)

        if !FileManager.default.fileExists(atPath: path + "/PG_VERSION") {
            logger.info("initializing embedded PostgreSQL cluster", metadata: ["dataDirectory": "\(path)"])
            try run(binDirectory.appendingPathComponent("initdb"),
                    ["-D", path, "--auth=trust", "-E", "UTF8", "--no-locale", "-U", config.superuser],
                    runAs: runAs, logTo: path + ".initdb.log")
            try? FileManager.default.removeItem(atPath: path + ".initdb.log")
        }
        try writeServerSettings(runAs: runAs)

        let pgCtl = binDirectory.appendingPathComponent("pg_ctl")
        if (try? run(pgCtl, ["-D", path, "status"], runAs: runAs, logTo: nil)) != nil {
            logger.info("adopting PostgreSQL already running on the data directory", metadata: ["dataDirectory": "\(path)"])
        } else {
            logger.info("starting embedded PostgreSQL", metadata: ["dataDirectory": "\(path)"])
            // Output to a file, not a pipe: the server inherits pg_ctl's descriptors and would hold
            // a pipe open forever.
            try run(pgCtl, ["-D", path, "-l", path + "/server.log", "-w", "-t", String(config.startTimeoutSeconds),
                            "start"], runAs: runAs, logTo: path + "/pg_ctl.log")
        }
        running = true
        try createDatabaseIfNeeded()
        return connectionString()
    }

    /// Stops the cluster (`pg_ctl stop -m fast`). Safe to call more than once.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopLocked()
    }

    private func stopLocked() {
        guard running else { return }
        running = false
        // Already stopped (e.g. by another owner of the folder): nothing to do.
        guard FileManager.default.fileExists(atPath: dataDirectory.path + "/postmaster.pid") else { return }
        do {
            let runAs = geteuid() == 0 ? try unprivilegedAccount() : nil
            try run(try resolveBinDirectory().appendingPathComponent("pg_ctl"),
                    ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"], runAs: runAs, logTo: nil)
            logger.info("stopped embedded PostgreSQL", metadata: ["dataDirectory": "\(dataDirectory.path)"])
        } catch {
            logger.error("could not stop embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Steps

    private struct Account { var user: String; var group: String; var uid: uid_t; var gid: gid_t }

    private func failure(_ message: String) -> PGError { PGError(code: .clusterFailed, message: message) }

    private func resolveBinDirectory() throws -> URL {
        if let configured = config.binDirectory { return configured }
        var candidates: [URL] = []
        if let output = try? capture("/usr/bin/env", ["pg_config", "--bindir"]) {
            candidates.append(URL(fileURLWithPath: output.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { URL(fileURLWithPath: "\(root)/\($0)/bin") }
        for candidate in candidates
        where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("initdb").path) {
            return candidate
        }
        throw failure("PostgreSQL server binaries (initdb, pg_ctl) not found via pg_config --bindir or \(root)/*/bin; install the postgresql package")
    }

    private func unprivilegedAccount() throws -> Account {
        guard let passwd = getpwnam(config.unprivilegedUser) else {
            throw failure("user \(config.unprivilegedUser) does not exist; it is needed to run PostgreSQL as root")
        }
        let gid = getgrnam(config.unprivilegedGroup)?.pointee.gr_gid ?? passwd.pointee.pw_gid
        return Account(user: config.unprivilegedUser, group: config.unprivilegedGroup,
                       uid: passwd.pointee.pw_uid, gid: gid)
    }

    /// Creates the folder (0700, owned by the server account) and, as root, checks that the
    /// server account can traverse every parent folder.
    private func prepareDirectory(runAs: Account?) throws {
        let path = dataDirectory.path
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        }
        guard let account = runAs else { return }
        var parent = dataDirectory.deletingLastPathComponent()
        while true {
            var info = stat()
            guard stat(parent.path, &info) == 0 else { throw failure("cannot stat folder \(parent.path)") }
            let mode = info.st_mode
            let traversable: Bool
            if info.st_uid == account.uid { traversable = mode & S_IXUSR != 0 }
            else if info.st_gid == account.gid { traversable = mode & S_IXGRP != 0 }
            else { traversable = mode & S_IXOTH != 0 }
            guard traversable else {
                throw failure("folder \(parent.path) is not traversable by user \(account.user), who runs PostgreSQL; "
                              + "choose a data directory elsewhere (e.g. under /tmp or /var/lib) or chmod o+x it")
            }
            if parent.path == "/" { break }
            parent = parent.deletingLastPathComponent()
        }
        try chownRecursively(path, account)
    }

    private func chownRecursively(_ path: String, _ account: Account) throws {
        var info = stat()
        if stat(path, &info) == 0, info.st_uid == account.uid { return }  // already ours (initdb-made)
        guard chown(path, account.uid, account.gid) == 0 else {
            throw failure("cannot chown \(path) to \(account.user): \(String(cString: strerror(errno)))")
        }
        chmod(path, 0o700)
        if let entries = FileManager.default.enumerator(atPath: path) {
            for case let entry as String in entries { _ = chown(path + "/" + entry, account.uid, account.gid) }
        }
    }

    /// Keeps our settings in a separate file included from postgresql.conf, rewritten on each
    /// start so a moved data folder gets the right socket folder.
    private func writeServerSettings(runAs: Account?) throws {
        let path = dataDirectory.path
        func quoted(_ value: String) -> String { "'" + value.replacingOccurrences(of: "'", with: "''") + "'" }
        let settings = """
            # Written by SpeakerSync on every start; edit postgresql.conf for your own settings.
            listen_addresses = ''
            unix_socket_directories = \(quoted(path))
            port = \(config.port)
            logging_collector = off
            max_wal_size = '1GB'
            max_connections = \(config.maxConnections)

            """
        let settingsPath = path + "/speakersync.conf"
        try settings.write(toFile: settingsPath, atomically: false, encoding: .utf8)
        let mainPath = path + "/postgresql.conf"
        let main = (try? String(contentsOfFile: mainPath, encoding: .utf8)) ?? ""
        if !main.contains("include_if_exists = 'speakersync.conf'") {
            try (main + "\ninclude_if_exists = 'speakersync.conf'\n").write(toFile: mainPath, atomically: false, encoding: .utf8)
        }
        if let account = runAs {
            _ = chown(settingsPath, account.uid, account.gid)
            _ = chown(mainPath, account.uid, account.gid)
        }
    }

    private func createDatabaseIfNeeded() throws {
        let admin = try PGConnection(connectionString: connectionString(database: "postgres"))
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

    // MARK: Processes

    /// Runs a tool to completion (as `runAs` through setpriv when given), output to `logTo` or
    /// /dev/null.
    ///
    /// Uses posix_spawn + waitpid rather than Foundation's Process: `pg_ctl start` leaves a
    /// daemonized server behind that inherits the child's descriptors, and Process detects exit
    /// through a descriptor the server would then hold open forever. Here every descriptor above
    /// stderr is closed in the child.
    private func run(_ tool: URL, _ arguments: [String], runAs: Account?, logTo logPath: String?) throws {
        var argv: [String]
        if let account = runAs {
            argv = ["/usr/bin/setpriv", "--reuid=\(account.uid)", "--regid=\(account.gid)", "--clear-groups", "--",
                    tool.path] + arguments
        } else {
            argv = [tool.path] + arguments
        }
        let outputPath = logPath ?? "/dev/null"
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        environment.removeValue(forKey: "PGDATA")
        let envp = environment.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc extensions (2.34+, 2.29+) that Swift's Glibc module does not expose without _GNU_SOURCE.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        let defaultHandle = UnsafeMutableRawPointer(bitPattern: 0)
        guard let closeFromSymbol = dlsym(defaultHandle, "posix_spawn_file_actions_addclosefrom_np") else {
            throw failure("this C library lacks posix_spawn_file_actions_addclosefrom_np (glibc >= 2.34 needed)")
        }
        _ = unsafeBitCast(closeFromSymbol, to: CloseFrom.self)(&actions, 3)
        if let chdirSymbol = dlsym(defaultHandle, "posix_spawn_file_actions_addchdir_np") {
            _ = unsafeBitCast(chdirSymbol, to: ChangeDirectory.self)(&actions, "/")
        }

        var pid: pid_t = 0
        let status = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnvp in posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnvp) }
        }
        guard status == 0 else {
            throw failure("cannot start \(argv[0]): \(String(cString: strerror(status)))")
        }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) == -1 && errno == EINTR {}
        let exited = exitStatus & 0x7f == 0
        let code = (exitStatus >> 8) & 0xff
        guard exited && code == 0 else {
            var detail = ""
            if let logPath, let logged = try? String(contentsOfFile: logPath, encoding: .utf8) {
                detail = ": " + String(logged.suffix(2000)).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw failure("\(tool.lastPathComponent) \(arguments.joined(separator: " ")) failed (wait status \(exitStatus))\(detail)")
        }
    }

    private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }

    private func capture(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw failure("\(tool) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
