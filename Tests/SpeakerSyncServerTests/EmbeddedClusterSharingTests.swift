import Foundation
import Logging
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// What a second server does on the data folder of a running `serve` that owns its embedded
/// PostgreSQL: with `.refuse` (serve) it does not start and says who owns it; with `.attach` (demo,
/// eval) it runs on the owner's database as a client, and its shutdown leaves that database running.
@Suite struct EmbeddedClusterSharingTests {
    @Test func aSecondServerRefusesOrAttachesAndNeverStopsTheOwnersCluster() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-shared-\(UUID().uuidString.prefix(8))")
        let parent = ParentThread()
        defer {
            parent.finish()
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(atPath: folder.path + ".lock")
            try? FileManager.default.removeItem(atPath: folder.path + ".pgpass")
        }
        let owner = try await parent.run { try ServerProcess(embeddedDataDirectory: folder.path) }
        defer {
            owner.kill()  // its PostgreSQL then stops by itself (parent-death signal) and removes its pid file
            Polling.until(seconds: 60) { !FileManager.default.fileExists(atPath: folder.path + "/postmaster.pid") }
        }

        var config = ServerConfig.default
        config.port = 0
        config.databaseURL = nil
        config.dataDirectory = folder.path
        config.access.environmentAdminKey = owner.adminKey
        config.providerIsolation.mode = .none
        var logger = Logger(label: "test.shared-cluster")
        logger.logLevel = .warning

        let refused = SpeakerSyncApplication(config: config, logger: logger)
        let refusal = #expect(throws: ServerError.self) { try refused.start() }
        #expect(refusal?.code == .clusterInUse)
        #expect(refusal?.message.contains("pid \(owner.processID)") == true)

        config.embeddedClusterInUse = .attach
        let attached = SpeakerSyncApplication(config: config, logger: logger)
        let port = try await Blocking.run { try attached.start() }
        #expect(attached.embeddedClusterRole == .client(ownerPID: owner.processID))
        #expect(try SimpleHTTPClient.get("http://127.0.0.1:\(port)/healthz").status == 200)
        attached.shutdown()

        #expect(ServerProcess.answers(port: owner.port))
        let url = EmbeddedPostgresCluster(dataDirectory: folder, logger: logger).connectionString()
        #expect(try PGConnection(connectionString: url).query("SELECT 1 AS one")[0].decode(Int.self, column: "one") == 1)
    }
}
