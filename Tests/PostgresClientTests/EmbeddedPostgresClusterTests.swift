import TestSupport
import Foundation
import Logging
import Testing
@testable import PostgresClient

@Suite struct EmbeddedPostgresClusterTests {
    /// A second cluster object on a running data folder adopts the server instead of failing,
    /// and after stop the folder can be started again (initdb is not repeated).
    @Test func adoptsRunningClusterAndRestarts() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pgcluster-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let logger = Logger(label: "test")
        let first = EmbeddedPostgresCluster(dataDirectory: folder, logger: logger)
        let url = try first.start()
        try PGConnection(connectionString: url).execute("CREATE TABLE marker (id int)")

        let second = EmbeddedPostgresCluster(dataDirectory: folder, logger: logger)
        let adoptedURL = try second.start()
        let tables = try PGConnection(connectionString: adoptedURL)
            .query("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'marker'")
        #expect(try tables[0].decode(Int.self, column: "n") == 1)
        second.stop()
        #expect(throws: PGError.self) { try PGConnection(connectionString: url) }

        first.stop()  // already stopped by the adopter: must not crash
        let restarted = EmbeddedPostgresCluster(dataDirectory: folder, logger: logger)
        let again = try restarted.start()
        #expect(try PGConnection(connectionString: again).query("SELECT 1 AS one")[0].decode(Int.self, column: "one") == 1)
        restarted.stop()
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
    }
}
