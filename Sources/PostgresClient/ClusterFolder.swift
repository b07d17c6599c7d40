import Foundation
import Logging

/// The data folder's preparation: binaries found, the folder made and handed to the server's
/// account, initdb on first use, our settings file. None of it starts or stops a server.
struct ClusterFolder {
    let dataDirectory: URL
    let config: EmbeddedPostgresConfig

    var path: String { dataDirectory.path }

    private func failure(_ message: String) -> PGError { PGError(code: .clusterFailed, message: message) }

    /// unix socket paths are limited to 107 bytes (sun_path).
    func checkSocketPath() throws {
        let socketPath = path + "/.s.PGSQL.\(config.port)"
        guard socketPath.utf8.count < 108 else {
            throw failure("data directory path is too long for a unix socket (\(socketPath.utf8.count) bytes > 107): \(path)")
        }
    }

    func resolveBinDirectory() throws -> URL {
        if let configured = config.binDirectory { return configured }
        var candidates: [URL] = []
        if let output = try? ChildProcess.capture("/usr/bin/env", ["pg_config", "--bindir"]) {
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
        throw failure("PostgreSQL server binaries (initdb, postgres) not found via pg_config --bindir or \(root)/*/bin; set DATABASE_URL to use a PostgreSQL server (required in the container image), or install the postgresql package for the embedded cluster")
    }

    /// Creates the folder (0700, owned by the server account) and, as root, checks that the
    /// server account can traverse every parent folder. A folder an earlier version ran as another
    /// account (`nobody`) is handed over, files and all; one left wider than 0700 is narrowed (the
    /// socket lives in it: its mode decides who can even try to connect).
    func prepare(runAs: ClusterAccount?) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        }
        defer { chmod(path, 0o700) }
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

    private func chownRecursively(_ path: String, _ account: ClusterAccount) throws {
        var info = stat()
        if stat(path, &info) == 0, info.st_uid == account.uid, info.st_gid == account.gid { return }  // already its own
        guard chown(path, account.uid, account.gid) == 0 else {
            throw failure("cannot chown \(path) to \(account.user): \(String(cString: strerror(errno)))")
        }
        chmod(path, 0o700)
        if let entries = FileManager.default.enumerator(atPath: path) {
            // lchown: a symlink in the folder (a relocated pg_wal) is handed over, not what it points to.
            for case let entry as String in entries { _ = lchown(path + "/" + entry, account.uid, account.gid) }
        }
    }

    /// initdb on first use (UTF8, no locale). Its authentication settings never serve a
    /// connection: `writeAuthentication` replaces them before the server first starts. They are
    /// the strict ones anyway (peer, TCP refused), which need no superuser password.
    func initializeIfNeeded(binDirectory: URL, runAs: ClusterAccount?, logger: Logger) throws {
        guard !FileManager.default.fileExists(atPath: path + "/PG_VERSION") else { return }
        logger.info("initializing embedded PostgreSQL cluster", metadata: ["dataDirectory": "\(path)"])
        try ChildProcess.run(binDirectory.appendingPathComponent("initdb"),
                             ["-D", path, "--auth-local=peer", "--auth-host=reject", "-E", "UTF8", "--no-locale",
                              "-U", config.superuser],
                             runAs: runAs, logTo: path + ".initdb.log")
        try? FileManager.default.removeItem(atPath: path + ".initdb.log")
    }

    /// Keeps our settings in a separate file included from postgresql.conf, rewritten on each
    /// start so a moved data folder gets the right socket folder.
    func writeServerSettings(runAs: ClusterAccount?) throws {
        func quoted(_ value: String) -> String { "'" + value.replacingOccurrences(of: "'", with: "''") + "'" }
        let settings = """
            # Written by SpeakerSync on every start; edit postgresql.conf for your own settings.
            listen_addresses = ''
            unix_socket_directories = \(quoted(path))
            port = \(config.port)
            logging_collector = off
            max_wal_size = '1GB'
            max_connections = \(config.maxConnections)
            password_encryption = 'scram-sha-256'

            """
        try writeOwned(settings, to: path + "/speakersync.conf", runAs: runAs)
        let mainPath = path + "/postgresql.conf"
        let main = SecretFile.readRegular(mainPath) ?? ""
        if !main.contains("include_if_exists = 'speakersync.conf'") {
            try writeOwned(main + "\ninclude_if_exists = 'speakersync.conf'\n", to: mainPath, runAs: runAs)
        }
    }

    /// Replaces a file of the folder (0600, the server's account's). As root this writes in a folder
    /// that account controls: nothing there (a symlink to /etc/shadow) is followed, and the file is
    /// handed over before it takes its name (`SecretFile`).
    private func writeOwned(_ contents: String, to filePath: String, runAs: ClusterAccount?) throws {
        try SecretFile.write(contents, to: filePath, owner: runAs.map { ($0.uid, $0.gid) })
    }

    /// Writes pg_hba.conf and pg_ident.conf (`ClusterAuthentication`): the superuser only as
    /// `ownerUser` over peer, every other role with its password. Returns the `trust` rules the old
    /// pg_hba.conf had (a cluster an earlier SpeakerSync initialised), for the log.
    func writeAuthentication(ownerUser: String, runAs: ClusterAccount?) throws -> [String] {
        guard ClusterAuthentication.isWritable(ownerUser), ClusterAuthentication.isWritable(config.superuser) else {
            throw failure("user name \(ownerUser) or role name \(config.superuser) cannot be written in pg_hba.conf")
        }
        let rulesPath = path + "/pg_hba.conf"
        let replaced = ClusterAuthentication.trustRules(in: SecretFile.readRegular(rulesPath) ?? "")
        let files = [
            (rulesPath, ClusterAuthentication.hostBasedRules(superuser: config.superuser)),
            (path + "/pg_ident.conf", ClusterAuthentication.identityMap(ownerUser: ownerUser, superuser: config.superuser)),
        ]
        for (filePath, contents) in files { try writeOwned(contents, to: filePath, runAs: runAs) }
        return replaced
    }

    /// The server's log (appended to across restarts), made to belong to the server's account so
    /// it stays writable by `pg_ctl -l` run as that account.
    func prepareServerLog(runAs: ClusterAccount?) -> String {
        let logPath = path + "/server.log"
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor >= 0 {
            if let account = runAs { _ = fchown(descriptor, account.uid, account.gid) }
            close(descriptor)
        }
        return logPath
    }

    /// The last lines of the server's log, for an error message.
    func serverLogTail() -> String {
        guard let text = SecretFile.readRegular(path + "/server.log") else { return "" }
        return String(text.suffix(1500)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
