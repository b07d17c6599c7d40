import Foundation
import Logging
import PostgresClient

/// Applies the numbered migrations in `schema/` (`0001_initial.sql`, `0002_….sql`, …) that the
/// database has not seen yet, each in its own transaction, and records them in `schema_migrations`.
/// Several servers starting at once serialise on an advisory lock, so each migration runs once.
public struct MigrationRunner: Sendable {
    public struct Migration: Sendable, Equatable {
        public var version: Int
        public var name: String
        public var sql: String
    }

    public let directory: URL
    private let logger: Logger

    public init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// The migrations on disk, in version order. File names must start with a number and an underscore.
    public func migrations() throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        var migrations: [Migration] = []
        for name in names {
            guard let version = Int(name.prefix(while: \.isNumber)), name.dropFirst(name.prefix(while: \.isNumber).count).first == "_" else {
                throw StoreError(code: .invalidMigration, message: "migration file '\(name)' must be named NNNN_description.sql")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            migrations.append(Migration(version: version, name: name, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) where a.version == b.version {
            throw StoreError(code: .invalidMigration, message: "two migrations have version \(a.version): \(a.name), \(b.name)")
        }
        return migrations
    }

    /// Applies what is missing; returns the versions applied now.
    @discardableResult
    public func migrate(_ connection: PGConnection) throws -> [Int] {
        let pending = try migrations()
        // The lock comes first, before anything touches the catalog: two servers that both ran
        // CREATE TABLE IF NOT EXISTS at once on a fresh database would both pass the "not exists" check,
        // and the second would die on pg_type's unique index (23505) when the first committed.
        try connection.execute("SELECT pg_advisory_lock($1)", [Self.lockKey])
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
        try connection.execute(Self.createTrackingTable)
        let applied = Set(try connection.query("SELECT version FROM schema_migrations").rows.map { try $0.decode(Int.self, column: "version") })
        var appliedNow: [Int] = []
        for migration in pending where !applied.contains(migration.version) {
            try connection.transaction { connection in
                // Simple query protocol: a migration file holds several statements and no parameters.
                try connection.executeScript(migration.sql)
                try connection.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name])
            }
            logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            appliedNow.append(migration.version)
        }
        return appliedNow
    }

    static let lockKey: Int64 = 0x5350_4b53_594e_43   // "SPKSYNC"

    static let createTrackingTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
        """
}
