import TestSupport
import Foundation
import Logging
import Testing
@testable import PostgresClient

/// The embedded cluster's least privilege, on real clusters: the account that runs it, who may
/// connect and how, and what the server's role may not do.
@Suite struct EmbeddedClusterPrivilegeTests {
    typealias Helpers = EmbeddedPostgresClusterTests

    /// A started owner on a fresh folder, stopped and removed when `body` returns.
    static func withCluster<T>(_ name: String, config: EmbeddedPostgresConfig = .default,
                               _ body: (EmbeddedPostgresCluster, URL) throws -> T) throws -> T {
        let folder = Helpers.folder(name)
        defer { Helpers.removeFolder(folder) }
        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, config: config, logger: Helpers.logger)
        try cluster.start()
        defer { cluster.stop() }
        return try body(cluster, folder)
    }

    static func status(_ path: String) throws -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw PGError(code: .clusterFailed, message: "cannot stat \(path)") }
        return info
    }

    /// The real uid of a process (the first field of /proc/PID/status's Uid line).
    static func uid(of pid: pid_t) -> uid_t? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
        return line?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { uid_t($0) }
    }

    static func sqlState(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as PGError {
            return error.sqlState ?? error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    /// As root the folder and the server belong to the dedicated account (never `nobody`),
    /// otherwise to this process's user; the folder is 0700 either way, and the password file
    /// beside it is this process's, 0600.
    @Test func theFolderAndTheServerBelongToTheClusterAccount() throws {
        try Self.withCluster("pgaccount") { cluster, folder in
            let expected = geteuid() == 0 ? try #require(SystemUser.named(EmbeddedPostgresConfig.default.unprivilegedUser)).uid : geteuid()
            #expect(expected != SystemUser.named("nobody")?.uid)
            let info = try Self.status(folder.path)
            #expect(info.st_mode & 0o777 == 0o700)
            #expect(info.st_uid == expected)
            for file in ["pg_hba.conf", "pg_ident.conf", "PG_VERSION"] {
                #expect(try Self.status(folder.path + "/" + file).st_uid == expected, "\(file)")
            }
            let postmaster = try #require(cluster.postmasterPID)
            #expect(Self.uid(of: postmaster) == expected)

            let passwords = try Self.status(cluster.passwordFilePath)
            #expect(passwords.st_mode & 0o777 == 0o600)
            #expect(passwords.st_uid == geteuid())
            #expect(cluster.passwordFilePath == folder.path + ".pgpass")
            #expect(!cluster.connectionString().contains(try String(contentsOfFile: cluster.passwordFilePath, encoding: .utf8)
                .split(separator: ":").last.map(String.init)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"))
        }
    }

    /// pg_hba.conf trusts no one, as the file says and as the server read it.
    @Test func nothingIsTrusted() throws {
        try Self.withCluster("pghba") { cluster, folder in
            let rules = try String(contentsOfFile: folder.path + "/pg_hba.conf", encoding: .utf8)
            #expect(ClusterAuthentication.trustRules(in: rules).isEmpty)
            let admin = try PGConnection(connectionString: cluster.superuserConnectionString())
            let methods = try admin.query("SELECT DISTINCT auth_method FROM pg_hba_file_rules WHERE error IS NULL ORDER BY 1")
                .rows.map { try $0.decode(String.self, column: "auth_method") }
            #expect(methods == ["peer", "scram-sha-256"])
            let errors = try admin.query("SELECT count(*) AS n FROM pg_hba_file_rules WHERE error IS NOT NULL")[0]
            #expect(try errors.decode(Int.self, column: "n") == 0)
        }
    }

    /// Without the password, with a wrong one, or as another operating-system user, nobody gets in.
    @Test func connectingWithoutThePasswordOrThePeerIdentityFails() throws {
        try Self.withCluster("pgauth") { cluster, folder in
            let socket = "host=\(PGConnection.quoteConnectionValue(folder.path)) port=\(cluster.config.port) dbname=speakersync"
            #expect(throws: PGError.self) { try PGConnection(connectionString: socket + " user=speakersync_app passfile=/nonexistent") }

            let wrong = folder.path + ".wrong-pgpass"
            defer { unlink(wrong) }
            try SecretFile.write(ClusterPasswordFile.line(role: "speakersync_app", password: "not-the-password") + "\n", to: wrong)
            let refused = #expect(throws: PGError.self) {
                try PGConnection(connectionString: socket + " user=speakersync_app passfile=\(PGConnection.quoteConnectionValue(wrong))")
            }
            #expect(refused?.message.contains("password authentication failed") == true, "\(String(describing: refused))")
            // The superuser has no password to guess: only peer lets anyone act as it.
            let admin = try PGConnection(connectionString: cluster.superuserConnectionString())
            let secret = try admin.query("SELECT rolpassword IS NULL AS none FROM pg_authid WHERE rolname = 'postgres'")[0]
            #expect(try secret.decode(Bool.self, column: "none"))
            #expect(try PGConnection(connectionString: cluster.connectionString()).query("SELECT 1 AS one")[0].decode(Int.self, column: "one") == 1)

            // Another operating-system user that can reach the socket (the cluster's own account)
            // is not the owner's: peer refuses it the superuser.
            guard geteuid() == 0, let account = try ClusterAccount.forCurrentProcess(.default, logger: Helpers.logger) else { return }
            let psql = try ClusterFolder(dataDirectory: folder, config: .default).resolveBinDirectory().appendingPathComponent("psql")
            let log = folder.path + ".psql.log"
            defer { unlink(log) }
            let failure = #expect(throws: PGError.self) {
                try ChildProcess.run(psql, ["-w", "-h", folder.path, "-p", "\(cluster.config.port)", "-U", "postgres", "-d", "postgres",
                                            "-c", "SELECT 1"], runAs: account, logTo: log)
            }
            #expect(failure?.message.contains("Peer authentication failed") == true, "\(String(describing: failure))")
        }
    }

    /// The server's role owns its database and nothing lets it out: no superuser, no CREATEDB or
    /// CREATEROLE, no programs, no server files. The superuser can do each of these, so the refusals
    /// are the role's, not the cluster's.
    @Test func theServersRoleCannotReachTheServerHost() throws {
        try Self.withCluster("pgrole") { cluster, _ in
            let app = try PGConnection(connectionString: cluster.connectionString())
            let role = try app.query("""
                SELECT current_user AS me, r.rolsuper, r.rolcreatedb, r.rolcreaterole,
                       (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()) AS owner
                FROM pg_roles r WHERE r.rolname = current_user
                """)[0]
            #expect(try role.decode(String.self, column: "me") == "speakersync_app")
            #expect(try role.decode(Bool.self, column: "rolsuper") == false)
            #expect(try role.decode(Bool.self, column: "rolcreatedb") == false)
            #expect(try role.decode(Bool.self, column: "rolcreaterole") == false)
            #expect(try role.decode(String.self, column: "owner") == "speakersync_app")

            try app.execute("CREATE TABLE lines (line text)")  // its own database: it may create tables
            let refused = "42501"  // insufficient_privilege
            #expect(Self.sqlState { try app.execute("COPY lines FROM PROGRAM 'id'") } == refused)
            #expect(Self.sqlState { try app.execute("COPY lines FROM '/etc/passwd'") } == refused)
            #expect(Self.sqlState { try app.execute("COPY lines TO '/tmp/speakersync-copy-to'") } == refused)
            #expect(Self.sqlState { _ = try app.query("SELECT pg_read_file('/etc/passwd')") } == refused)
            #expect(Self.sqlState { _ = try app.query("SELECT pg_ls_dir('.')") } == refused)
            #expect(Self.sqlState { try app.execute("CREATE DATABASE escape") } == refused)
            #expect(Self.sqlState { try app.execute("CREATE ROLE accomplice") } == refused)
            #expect(Self.sqlState { try app.execute("ALTER ROLE speakersync_app SUPERUSER") } == refused)
            #expect(Self.sqlState { try app.execute("GRANT pg_execute_server_program TO speakersync_app") } == refused)

            let admin = try PGConnection(connectionString: cluster.superuserConnectionString(database: "speakersync"))
            try admin.execute("COPY lines FROM PROGRAM 'id'")
            #expect(try app.query("SELECT count(*) AS n FROM lines")[0].decode(Int.self, column: "n") == 1)
        }
    }

    /// A lost password file, or one others could read, is replaced at the next start: a new
    /// password, set on the role, and the old one no longer works.
    @Test func aLostOrExposedPasswordFileGetsANewPassword() throws {
        let folder = Helpers.folder("pgpass")
        defer { Helpers.removeFolder(folder) }
        let first = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try first.start()
        first.stop()
        let original = try String(contentsOfFile: first.passwordFilePath, encoding: .utf8)
        let kept = folder.path + ".old-pgpass"
        defer { unlink(kept) }
        try SecretFile.write(original, to: kept)

        unlink(first.passwordFilePath)
        let second = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try second.start()
        let replaced = try String(contentsOfFile: second.passwordFilePath, encoding: .utf8)
        #expect(replaced != original)
        #expect(try Helpers.selectOne(second.connectionString()) == 1)
        let socket = "host=\(PGConnection.quoteConnectionValue(folder.path)) port=5432 dbname=speakersync user=speakersync_app"
        #expect(throws: PGError.self) { try PGConnection(connectionString: socket + " passfile=\(PGConnection.quoteConnectionValue(kept))") }
        second.stop()

        chmod(second.passwordFilePath, 0o644)
        let third = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try third.start()
        defer { third.stop() }
        #expect(try Self.status(third.passwordFilePath).st_mode & 0o777 == 0o600)
        #expect(try String(contentsOfFile: third.passwordFilePath, encoding: .utf8) != replaced)
        #expect(try Helpers.selectOne(third.connectionString()) == 1)
    }

    /// As root the owner writes into a folder the cluster's account controls: a symlink planted
    /// there in place of a file it rewrites at every start is replaced, never followed.
    @Test func symlinksPlantedInTheFolderAreNotFollowed() throws {
        let folder = Helpers.folder("pgsymlink")
        defer { Helpers.removeFolder(folder) }
        let first = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try first.start()
        first.stop()
        let target = folder.path + ".target"
        defer { unlink(target) }
        try "untouched\n".write(toFile: target, atomically: false, encoding: .utf8)
        let names = ["speakersync.conf", "pg_hba.conf", "pg_ident.conf"]
        for name in names {
            unlink(folder.path + "/" + name)
            #expect(symlink(target, folder.path + "/" + name) == 0)
        }
        let second = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try second.start()
        defer { second.stop() }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched\n")
        #expect(try Self.status(target).st_uid == geteuid())
        for name in names {
            #expect(try Self.status(folder.path + "/" + name).st_mode & S_IFMT == S_IFREG, "\(name)")
        }
        #expect(try Helpers.selectOne(second.connectionString()) == 1)
    }
}
