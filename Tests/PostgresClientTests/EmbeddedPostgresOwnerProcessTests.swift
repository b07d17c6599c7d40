import ChildProcesses
import TestSupport
import Foundation
import Logging
import Testing
@testable import PostgresClient

/// The embedded cluster's owner as a real `speakersync serve` process: its death takes its server
/// with it (the kernel's parent-death signal, through setpriv's uid change and the exec of
/// postgres), and a second `serve` on its folder refuses while the first keeps answering.
@Suite struct EmbeddedPostgresOwnerProcessTests {
    /// The server recorded in the folder's postmaster.pid.
    static func postmasterPID(_ folder: URL) -> pid_t? {
        guard let text = try? String(contentsOfFile: folder.path + "/postmaster.pid", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test func theOwnersDeathStopsItsPostmaster() async throws {
        let folder = EmbeddedPostgresClusterTests.folder("pgowner")
        let parent = ParentThread()
        defer {
            parent.finish()
            EmbeddedPostgresClusterTests.removeFolder(folder)
        }
        let owner = try await parent.run { try ServerProcess(embeddedDataDirectory: folder.path) }
        let postmaster = try #require(Self.postmasterPID(folder))
        #expect(ProcessState.isRunning(postmaster))
        #expect(EmbeddedPostgresClusterTests.parent(of: postmaster) == owner.processID)

        owner.kill()  // SIGKILL: no shutdown code runs in the owner
        let gone = Polling.until(seconds: 60) { !ProcessState.isRunning(postmaster) }
        #expect(gone, "postmaster \(postmaster) outlived its owner")

        // Nothing is left on the folder: the next owner starts without finding a leftover.
        #expect(LeftoverPostmaster.find(in: folder) == nil)
        let next = EmbeddedPostgresCluster(dataDirectory: folder, logger: EmbeddedPostgresClusterTests.logger)
        let url = try next.start()
        defer { next.stop() }
        #expect(try EmbeddedPostgresClusterTests.selectOne(url) == 1)
    }

    @Test func aSecondServeOnTheFolderRefusesAndTheFirstKeepsAnswering() async throws {
        let folder = EmbeddedPostgresClusterTests.folder("pgserve")
        let parent = ParentThread()
        defer {
            parent.finish()
            EmbeddedPostgresClusterTests.removeFolder(folder)
        }
        let first = try await parent.run { try ServerProcess(embeddedDataDirectory: folder.path) }
        defer {
            first.kill()
            if let pid = Self.postmasterPID(folder) { Polling.until(seconds: 60) { !ProcessState.isRunning(pid) } }
        }
        let postmaster = try #require(Self.postmasterPID(folder))

        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment["SPEAKERSYNC_ADMIN_KEY"] = first.adminKey
        let second = Subprocess.Configuration(
            executable: try ServerProcess.executableURL().path,
            arguments: ["serve", "--port", "\(try ServerProcess.freePort())", "--data-dir", folder.path, "--log-level", "error"],
            environment: environment)
        let refused = try await Blocking.run { try Subprocess.run(second) }
        let stderr = refused.standardErrorText
        #expect(!refused.exit.succeeded)
        #expect(stderr.contains("cluster_in_use"), "\(stderr)")
        #expect(stderr.contains("another SpeakerSync (pid \(first.processID)) owns the embedded PostgreSQL in \(folder.path)"), "\(stderr)")
        #expect(stderr.contains("--database-url"), "\(stderr)")

        // The refused server touched nothing: the same postmaster serves, and the first answers.
        #expect(Self.postmasterPID(folder) == postmaster)
        #expect(ProcessState.isRunning(postmaster))
        #expect(ServerProcess.answers(port: first.port))
        let url = EmbeddedPostgresCluster(dataDirectory: folder, logger: EmbeddedPostgresClusterTests.logger).connectionString()
        #expect(try EmbeddedPostgresClusterTests.selectOne(url) == 1)
    }

    /// The environment of a process, from /proc/PID/environ (name to value).
    static func environment(of pid: pid_t) -> [String: String]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
        var variables: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return variables
    }

    /// An owner whose environment holds the secrets SpeakerSync is given (the admin key, a
    /// Picovoice key, a libpq password, DATABASE_URL — empty, or `serve` would use it instead of
    /// its embedded cluster) starts its PostgreSQL with none of them: not in the postmaster's
    /// environment, not in its children's, not in what a backend hands a program it runs. Its
    /// provider worker has none of them either: the Picovoice key goes to Falcon's worker through its
    /// configuration, never an environment.
    @Test func theServersChildrenInheritNoSecret() async throws {
        let folder = EmbeddedPostgresClusterTests.folder("pgenviron")
        let plugins = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: false)
        let parent = ParentThread()
        defer {
            parent.finish()
            EmbeddedPostgresClusterTests.removeFolder(folder)
            try? FileManager.default.removeItem(at: plugins)
        }
        let adminKey = "ssa-canary-admin-key-0123456789abcdef0123456789"
        let secrets = ["PICOVOICE_ACCESS_KEY": "pv-canary-0123456789abcdef", "PGPASSWORD": "pg-canary-0123456789abcdef",
                       "DATABASE_URL": ""]
        let owner = try await parent.run {
            try ServerProcess(embeddedDataDirectory: folder.path, adminKey: adminKey,
                              extraArguments: ["--plugins", plugins.path, "--provider-isolation", "process"], environment: secrets)
        }
        defer {
            owner.kill()
            if let pid = Self.postmasterPID(folder) { Polling.until(seconds: 60) { !ProcessState.isRunning(pid) } }
        }
        let names = Set(secrets.keys).union(["SPEAKERSYNC_ADMIN_KEY"])
        let canaries = Array(secrets.values.filter { !$0.isEmpty }) + [adminKey]

        // The owner holds them: what follows is not vacuous.
        let ownerEnvironment = try #require(Self.environment(of: owner.processID))
        #expect(names.isSubset(of: Set(ownerEnvironment.keys)))

        let postmaster = try #require(Self.postmasterPID(folder))
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [])
            .compactMap(pid_t.init).filter { EmbeddedPostgresClusterTests.parent(of: $0) == postmaster }
        #expect(!children.isEmpty, "the postmaster's helpers (checkpointer, walwriter, …)")
        for pid in [postmaster] + children {
            let raw = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
            let text = String(decoding: raw, as: UTF8.self)
            let inherited = try #require(Self.environment(of: pid))
            #expect(names.isDisjoint(with: inherited.keys), "pid \(pid): \(inherited.keys.sorted())")
            #expect(!canaries.contains { text.contains($0) }, "pid \(pid)")
        }
        // The postmaster's own environment is the allowlist (its helpers rewrite theirs with their
        // titles, so the programs a backend runs are what shows their real inheritance, below).
        let postmasterEnvironment = try #require(Self.environment(of: postmaster))
        #expect(Set(postmasterEnvironment.keys).isSubset(of: ["PATH", "LANG", "LC_ALL", "TZ", "HOME"]), "\(postmasterEnvironment.keys.sorted())")
        #expect(postmasterEnvironment["LC_ALL"] == "C")

        // The provider worker (started for each plugin as the server starts).
        var worker: pid_t?
        #expect(Polling.until(seconds: 60) {
            worker = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(pid_t.init).first { pid in
                EmbeddedPostgresClusterTests.parent(of: pid) == owner.processID
                    && (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self) } ?? "")
                        .contains("provider-worker")
            }
            return worker != nil
        })
        let workerPID = try #require(worker)
        let workerEnvironment = try #require(Self.environment(of: workerPID))
        #expect(workerEnvironment["PATH"] != nil)
        #expect(names.isDisjoint(with: workerEnvironment.keys), "\(workerEnvironment.keys.sorted())")
        #expect(workerEnvironment["SPEAKERSYNC_DATA_DIR"] == nil)
        #expect(!workerEnvironment.values.contains { value in canaries.contains { value.contains($0) } })

        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, logger: EmbeddedPostgresClusterTests.logger)
        let admin = try PGConnection(connectionString: cluster.superuserConnectionString())
        try admin.execute("CREATE TEMP TABLE inherited (line text)")
        try admin.execute("COPY inherited FROM PROGRAM 'env'")
        let lines = try admin.query("SELECT line FROM inherited").rows.map { try $0.decode(String.self, column: "line") }
        let backendNames = Set(lines.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        #expect(backendNames.contains("PATH"))
        #expect(names.isDisjoint(with: backendNames), "\(backendNames.sorted())")
        #expect(!lines.contains { line in canaries.contains { line.contains($0) } })
    }
}
