import Foundation
import Logging
import PostgresClient
import SpeakerSyncStore

/// One real PostgreSQL cluster per test process, created in a fresh /tmp folder on first use and
/// stopped when the process exits. Each test takes its own database, so tests stay independent.
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
            if let folder = clusterToStop?.dataDirectory { try? FileManager.default.removeItem(at: folder) }
        }
        return cluster
    }()

    nonisolated(unsafe) private static var clusterToStop: EmbeddedPostgresCluster?

    /// Creates an empty database and returns its connection string.
    public static func freshDatabase() throws -> String {
        let cluster = shared
        let name = "t_\(UInt64.random(in: 0...UInt64.max))"
        let admin = try PGConnection(connectionString: cluster.connectionString())
        _ = try admin.execute("CREATE DATABASE \(name)")
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
