import Foundation
import Logging
import PostgresClient
import SpeakerSyncStore

/// One real PostgreSQL cluster per test process, created in a fresh /tmp folder on first use and
/// stopped when the process exits. Each test takes its own database, so tests stay independent.
///
/// The tests run as the server does: as the cluster's application role (no superuser, no
/// CREATEDB), which owns each test database. Only the databases' creation uses the superuser,
/// through the owner's own credentials (peer authentication as this process's user), as an
/// operator would create a database for a DATABASE_URL deployment.
public enum TestCluster {
    public static let shared: EmbeddedPostgresCluster = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var logger = Logger(label: "test.cluster")
        logger.logLevel = .warning
        // Suites run in parallel, each with servers of its own (a few connections each): more than
        // PostgreSQL's default 100 at the busiest moments.
        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, config: EmbeddedPostgresConfig(maxConnections: 1000), logger: logger)
        do { _ = try cluster.start() } catch { fatalError("cannot start the test PostgreSQL cluster: \(error)") }
        clusterToStop = cluster
        atexit {
            clusterToStop?.stop()
            if let folder = clusterToStop?.dataDirectory {
                for path in [folder.path, folder.path + ".lock", folder.path + ".pgpass"] { try? FileManager.default.removeItem(atPath: path) }
            }
        }
        return cluster
    }()

    nonisolated(unsafe) private static var clusterToStop: EmbeddedPostgresCluster?

    /// Creates an empty database owned by the application role and returns the role's connection
    /// string for it.
    public static func freshDatabase() throws -> String {
        let cluster = shared
        let name = "t_\(UInt64.random(in: 0...UInt64.max))"
        let admin = try PGConnection(connectionString: cluster.superuserConnectionString())
        _ = try admin.execute("CREATE DATABASE \(name) OWNER \(PGConnection.quoteIdentifier(cluster.config.applicationRole))")
        return cluster.connectionString(database: name)
    }
}

extension TestCluster {
    /// The repository's schema/ folder, found from this source file.
    public static var schemaDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema")
    }

    /// A fresh database with every migration applied.
    public static func migratedDatabase() throws -> String {
        let url = try freshDatabase()
        var logger = Logger(label: "test.migrations")
        logger.logLevel = .warning
        try MigrationRunner(directory: schemaDirectory, logger: logger).migrate(PGConnection(connectionString: url))
        return url
    }
}
