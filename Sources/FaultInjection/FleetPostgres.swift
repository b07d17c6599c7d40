import Foundation
import PostgresClient
#if canImport(Glibc)
import Glibc
#endif

/// The fleet's one PostgreSQL: a cluster of the harness's own in the `ss-pg` namespace, listening
/// on its veth address only, trusting the test subnet (a throwaway cluster on a private network:
/// no password to hand around). As with the embedded cluster (`ClusterAccount`), initdb and
/// postgres run as the unprivileged `speakersync-pg` (created when missing), since PostgreSQL
/// refuses root; setpriv switches to it and gives postgres a parent-death signal, so a crashed
/// harness leaves no server behind.
public final class FleetPostgres: Sendable {
    public let folder: URL
    public let address: String
    public let port = 5432
    public static let database = "speakersync"
    public static let role = "speakersync_app"
    static let account = "speakersync-pg"
    private let child = FleetChild(name: "postgres")
    private let launcher: [String]

    /// `folder`: its own (the data folder is made in it); `launcher`: `ip netns exec ss-pg`.
    public init(folder: URL, address: String, launcher: [String]) {
        self.folder = folder
        self.address = address
        self.launcher = launcher
    }

    /// What the servers are given: the application role (owner of its database, no superuser).
    public var databaseURL: String { "postgresql://\(Self.role)@\(address):\(port)/\(Self.database)?connect_timeout=5" }

    /// The checker's connection: the same role.
    public var checkerConnectionString: String { "host=\(address) port=\(port) user=\(Self.role) dbname=\(Self.database) connect_timeout=5" }

    var superuserConnectionString: String { "host=\(address) port=\(port) user=postgres dbname=postgres connect_timeout=3" }

    var dataDirectory: URL { folder.appendingPathComponent("data") }

    public var pid: pid_t? { child.pid }

    public func start() async throws {
        let bin = try Self.binDirectory()
        let (uid, gid) = try Self.unprivilegedAccount()
        let setpriv = try FleetCommand.locate(["/usr/bin/setpriv", "/bin/setpriv"])
        let asAccount = [setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"]
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let data = dataDirectory.path
        if !FileManager.default.fileExists(atPath: data + "/PG_VERSION") {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard chown(data, uid, gid) == 0 else { throw FleetCommand.Failure(description: "cannot chown \(data) to \(Self.account)") }
            try FleetCommand.run(asAccount + ["--", bin + "/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"])
            // The test network only, trusted: the cluster lives as long as the run.
            try write("""
                local all all trust
                host all all 10.77.0.0/24 trust
                host all all 127.0.0.1/32 trust

                """, to: data + "/pg_hba.conf", uid: uid, gid: gid)
            let settings = (try? String(contentsOfFile: data + "/postgresql.conf", encoding: .utf8)) ?? ""
            try write(settings + """

                # The fleet harness's settings.
                listen_addresses = '\(address)'
                port = \(port)
                unix_socket_directories = '\(data)'
                max_connections = 300
                logging_collector = off
                log_min_messages = warning

                """, to: data + "/postgresql.conf", uid: uid, gid: gid)
        }
        try await child.start(launcher + asAccount + ["--pdeathsig", "KILL", "--", bin + "/postgres", "-D", data],
                              logFile: folder.appendingPathComponent("postgres.log"))
        let deadline = Date().addingTimeInterval(60)
        var admin: PGConnection?
        while admin == nil {
            admin = try? PGConnection(connectionString: superuserConnectionString)
            if admin != nil { break }
            guard child.isRunning, Date() < deadline else {
                throw FleetCommand.Failure(description: "PostgreSQL in the ss-pg namespace did not accept connections (exit \(child.exitStatus.map(String.init) ?? "-")); see \(folder.path)/postgres.log")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let roles = try admin!.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [Self.role]).rows
        if roles.isEmpty { try admin!.execute("CREATE ROLE \(Self.role) LOGIN") }
        let databases = try admin!.query("SELECT 1 FROM pg_database WHERE datname = $1", [Self.database]).rows
        if databases.isEmpty { try admin!.execute("CREATE DATABASE \(Self.database) OWNER \(Self.role)") }
    }

    /// A fast shutdown (SIGINT), SIGKILL if it takes too long.
    public func stop() { child.stop(signal: SIGINT, timeoutSeconds: 30) }

    private func write(_ text: String, to path: String, uid: uid_t, gid: gid_t) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        chown(path, uid, gid)
    }

    static func binDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/postgres") {
            return "\(root)/\(version)/bin"
        }
        throw FleetCommand.Failure(description: "no PostgreSQL server binaries under \(root)/*/bin")
    }

    /// `speakersync-pg`'s uid and gid, the account created (as `ClusterAccount` does) when missing.
    static func unprivilegedAccount() throws -> (uid_t, gid_t) {
        if let entry = getpwnam(account) { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        try FleetCommand.run(["/usr/sbin/useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                              "--shell", "/usr/sbin/nologin", account])
        guard let entry = getpwnam(account) else { throw FleetCommand.Failure(description: "user \(account) could not be created") }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }
}
