import TestSupport
import Foundation
import Logging
import Testing
@testable import PostgresClient

@Suite struct EmbeddedPostgresClusterTests {
    static func folder(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))")
    }

    static func removeFolder(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.removeItem(atPath: folder.path + ".lock")
        try? FileManager.default.removeItem(atPath: folder.path + ".pgpass")
    }

    static var logger: Logger {
        var logger = Logger(label: "test.cluster")
        logger.logLevel = .warning
        return logger
    }

    static func selectOne(_ url: String) throws -> Int {
        try PGConnection(connectionString: url).query("SELECT 1 AS one")[0].decode(Int.self, column: "one")
    }

    /// One owner per folder: a second owner is refused with the first's pid and starts nothing; a
    /// client connects to the owner's server and its stop leaves it running; once the owner stops,
    /// the folder can be owned again (initdb is not repeated).
    @Test func aSecondOwnerIsRefusedAndAClientNeverStopsTheCluster() throws {
        let folder = Self.folder("pgcluster")
        defer { Self.removeFolder(folder) }
        let owner = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let url = try owner.start()
        #expect(owner.role == .owner)
        try PGConnection(connectionString: url).execute("CREATE TABLE marker (id int)")
        let lockText = try String(contentsOfFile: owner.lockFilePath, encoding: .utf8)
        #expect(lockText.trimmingCharacters(in: .whitespacesAndNewlines) == "\(getpid())")
        #expect(owner.lockFilePath == folder.path + ".lock")

        let second = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let refusal = #expect(throws: ClusterInUseError.self) { try second.start() }
        #expect(refusal?.code == "cluster_in_use")
        #expect(refusal?.ownerPID == getpid())
        #expect(refusal?.dataDirectory == folder.path)
        #expect(second.role == nil)
        second.stop()  // owns nothing: must not touch the owner's server
        #expect(try Self.selectOne(url) == 1)

        let client = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let clientURL = try client.startOrAttach()
        #expect(client.role == .client(ownerPID: getpid()))
        #expect(client.postmasterPID == nil)
        let tables = try PGConnection(connectionString: clientURL)
            .query("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'marker'")
        #expect(try tables[0].decode(Int.self, column: "n") == 1)
        client.stop()
        #expect(client.role == nil)
        #expect(try Self.selectOne(url) == 1)
        #expect(owner.postmasterPID.map(ProcessState.isRunning) == true)

        owner.stop()
        #expect(owner.role == nil)
        #expect(throws: PGError.self) { try PGConnection(connectionString: url) }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("postmaster.pid").path))

        let restarted = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let again = try restarted.start()
        #expect(try Self.selectOne(again) == 1)
        let kept = try PGConnection(connectionString: again)
            .query("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'marker'")
        #expect(try kept[0].decode(Int.self, column: "n") == 1)
        restarted.stop()
    }

    /// The owner's server runs as its child, in a process group of its own; killed, it is started
    /// again by the owner and new connections work.
    @Test func theOwnerRestartsAKilledPostmaster() throws {
        let folder = Self.folder("pgrestart")
        defer { Self.removeFolder(folder) }
        let owner = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let url = try owner.start()
        defer { owner.stop() }
        let first = try #require(owner.postmasterPID)
        #expect(Self.parent(of: first) == getpid())
        #expect(getpgid(first) == first)
        #expect(owner.restartCount == 0)

        kill(first, SIGKILL)
        let restarted = Polling.until(seconds: 90) {
            owner.restartCount >= 1 && owner.postmasterPID.map { $0 != first } == true && (try? Self.selectOne(url)) == 1
        }
        #expect(restarted, "restarts: \(owner.restartCount), pid: \(String(describing: owner.postmasterPID))")
        #expect(owner.postmasterPID.map(Self.parent) == getpid())
        #expect(owner.role == .owner)
    }

    /// A server left running on the folder without an owner (here started by hand with pg_ctl, as
    /// the account that runs the cluster) is stopped by the next owner, which starts its own.
    @Test func aLeftoverPostmasterIsStoppedAndReplaced() throws {
        let folder = Self.folder("pgleftover")
        defer { Self.removeFolder(folder) }
        let setUp = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        try setUp.start()  // initdb, settings
        setUp.stop()

        let config = EmbeddedPostgresConfig.default
        let binDirectory = try ClusterFolder(dataDirectory: folder, config: config).resolveBinDirectory()
        try ChildProcess.run(binDirectory.appendingPathComponent("pg_ctl"),
                             ["-D", folder.path, "-l", folder.path + "/leftover.log", "-w", "start"],
                             runAs: try ClusterAccount.forCurrentProcess(config, logger: Self.logger), logTo: nil)
        let leftover = try #require(LeftoverPostmaster.find(in: folder))
        #expect(ProcessState.isRunning(leftover.pid))
        #expect(Self.parent(of: leftover.pid) != getpid())

        let owner = EmbeddedPostgresCluster(dataDirectory: folder, logger: Self.logger)
        let url = try owner.start()
        defer { owner.stop() }
        #expect(!ProcessState.isRunning(leftover.pid))
        let supervised = try #require(owner.postmasterPID)
        #expect(supervised != leftover.pid)
        #expect(Self.parent(of: supervised) == getpid())
        #expect(try Self.selectOne(url) == 1)
    }

    @Test func untraversableParentIsNamedInError() throws {
        guard geteuid() == 0 else { return }  // only root runs the server as another user
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("pgclosed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: parent) }
        let cluster = EmbeddedPostgresCluster(dataDirectory: parent.appendingPathComponent("data"), logger: Logger(label: "test"))
        let error = #expect(throws: PGError.self) { try cluster.start() }
        #expect(error?.code == .clusterFailed)
        #expect(error?.message.contains(parent.path) == true)
        #expect(cluster.role == nil)
    }

    /// The parent pid in /proc/<pid>/stat.
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }
}
