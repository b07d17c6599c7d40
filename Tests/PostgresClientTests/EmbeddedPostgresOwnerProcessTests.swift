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

        let second = Process()
        second.executableURL = try ServerProcess.executableURL()
        second.arguments = ["serve", "--port", "\(try ServerProcess.freePort())", "--data-dir", folder.path, "--log-level", "error"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment["SPEAKERSYNC_ADMIN_KEY"] = first.adminKey
        second.environment = environment
        let errors = Pipe()
        second.standardError = errors
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        let stderr = try await Blocking.run {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            second.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(second.terminationStatus != 0)
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
}
