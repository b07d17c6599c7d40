import TestSupport
import Foundation
import Logging
import Testing
@testable import PostgresClient

/// A cluster an earlier SpeakerSync made (initdb with `trust`, run as `nobody` when root, every
/// object owned by the superuser) is converted by the next start and keeps its data; and the
/// dedicated account is created when missing, or its absence named.
@Suite struct EmbeddedClusterUpgradeTests {
    typealias Helpers = EmbeddedPostgresClusterTests

    /// What the old code left: a 0700 folder of `nobody` (as root), `trust` in pg_hba.conf, the
    /// database and its objects made by the superuser, data in them.
    static func makeOldCluster(_ folder: URL) throws {
        let binDirectory = try ClusterFolder(dataDirectory: folder, config: .default).resolveBinDirectory()
        let nobody = geteuid() == 0 ? SystemUser.named("nobody").map { ClusterAccount(user: $0.name, uid: $0.uid, gid: $0.gid, home: $0.home) } : nil
        #expect(geteuid() != 0 || nobody != nil)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let nobody { chown(folder.path, nobody.uid, nobody.gid) }
        try ChildProcess.run(binDirectory.appendingPathComponent("initdb"),
                             ["-D", folder.path, "--auth=trust", "-E", "UTF8", "--no-locale", "-U", "postgres"], runAs: nobody, logTo: nil)
        let pgctl = binDirectory.appendingPathComponent("pg_ctl")
        try ChildProcess.run(pgctl, ["-D", folder.path, "-l", folder.path + "/old.log", "-w", "-o", "-k \(folder.path) -h ''", "start"],
                             runAs: nobody, logTo: nil)
        defer { _ = try? ChildProcess.run(pgctl, ["-D", folder.path, "-m", "fast", "-w", "stop"], runAs: nobody, logTo: nil) }
        let trusted = "host=\(PGConnection.quoteConnectionValue(folder.path)) port=5432 user=postgres"
        try PGConnection(connectionString: trusted + " dbname=postgres").execute("CREATE DATABASE speakersync ENCODING 'UTF8' TEMPLATE template0")
        try PGConnection(connectionString: trusted + " dbname=speakersync").executeScript("""
            CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
            CREATE TABLE tags (id bigint GENERATED ALWAYS AS IDENTITY, name text);
            CREATE SEQUENCE counter;
            CREATE VIEW note_bodies AS SELECT body FROM notes;
            CREATE FUNCTION shout(text) RETURNS text LANGUAGE sql AS $$ SELECT upper($1) $$;
            CREATE TYPE mood AS ENUM ('calm', 'busy');
            CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
            CREATE SCHEMA archive;
            CREATE TABLE archive.old (x integer);
            INSERT INTO notes (body) VALUES ('kept across the upgrade');
            """)
    }

    @Test func aClusterMadeTheOldWayIsConvertedAndKeepsItsData() throws {
        let folder = Helpers.folder("pgold")
        defer { Helpers.removeFolder(folder) }
        try Self.makeOldCluster(folder)
        #expect(!ClusterAuthentication.trustRules(in: try String(contentsOfFile: folder.path + "/pg_hba.conf", encoding: .utf8)).isEmpty)

        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, logger: Helpers.logger)
        try cluster.start()
        defer { cluster.stop() }
        #expect(ClusterAuthentication.trustRules(in: try String(contentsOfFile: folder.path + "/pg_hba.conf", encoding: .utf8)).isEmpty)
        if geteuid() == 0 {
            let account = try #require(SystemUser.named(EmbeddedPostgresConfig.default.unprivilegedUser))
            var strays: [String] = []
            for case let entry as String in FileManager.default.enumerator(atPath: folder.path)! {
                var info = stat()
                if lstat(folder.path + "/" + entry, &info) == 0, info.st_uid != account.uid { strays.append(entry) }
            }
            #expect(strays.isEmpty, "not the cluster account's: \(strays.prefix(5))")
            #expect(try EmbeddedClusterPrivilegeTests.status(folder.path).st_uid == account.uid)
        }

        let app = try PGConnection(connectionString: cluster.connectionString())
        #expect(try app.query("SELECT body FROM notes")[0].decode(String.self, column: "body") == "kept across the upgrade")
        let foreign = try app.query("""
            SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname IN ('public', 'archive') AND c.relowner <> r.oid)
                 + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE n.nspname = 'public' AND p.proowner <> r.oid)
                 + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                    WHERE n.nspname IN ('public', 'archive') AND t.typowner <> r.oid)
                 + (SELECT count(*) FROM pg_namespace WHERE nspname = 'archive' AND nspowner <> r.oid)
                 + (SELECT count(*) FROM pg_database WHERE datname = 'speakersync' AND datdba <> r.oid) AS n
            FROM pg_roles r WHERE r.rolname = current_user
            """)[0]
        #expect(try foreign.decode(Int.self, column: "n") == 0)
        // What its migrations do to what it owns now works, and a new row uses the serial's sequence.
        try app.executeScript("""
            ALTER TABLE notes ADD COLUMN mood mood;
            ALTER TABLE archive.old ADD COLUMN y positive;
            INSERT INTO notes (body) VALUES ('written after');
            INSERT INTO tags (name) VALUES ('t');
            SELECT nextval('counter');
            CREATE OR REPLACE FUNCTION shout(text) RETURNS text LANGUAGE sql AS $$ SELECT upper($1) || '!' $$;
            DROP VIEW note_bodies;
            """)
        #expect(try app.query("SELECT shout(body) AS s FROM notes WHERE id = 2")[0].decode(String.self, column: "s") == "WRITTEN AFTER!")
        #expect(try app.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].decode(Bool.self, column: "rolsuper") == false)
        // The superuser, which trust let anyone act as, now needs this process's own user.
        #expect(throws: PGError.self) {
            try PGConnection(connectionString: "host=\(PGConnection.quoteConnectionValue(folder.path)) port=5432 user=speakersync_app "
                             + "dbname=speakersync passfile=/nonexistent")
        }
    }

    /// As root, a missing account is created (as scripts/setup would); one that cannot be created
    /// stops the start with `cluster_account_unavailable` and the command to run.
    @Test func aMissingAccountIsCreatedAndAnImpossibleOneNamed() throws {
        guard geteuid() == 0 else { return }  // only root runs the cluster as another user
        let name = "sstest\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        #expect(SystemUser.named(name) == nil)
        defer { _ = try? ChildProcess.run(URL(fileURLWithPath: "/usr/sbin/userdel"), [name], runAs: nil, logTo: nil) }
        try EmbeddedClusterPrivilegeTests.withCluster("pgnewuser", config: EmbeddedPostgresConfig(unprivilegedUser: name)) { cluster, folder in
            let account = try #require(SystemUser.named(name))
            #expect(account.uid != 0 && account.uid < 1000, "a system user")
            #expect(try EmbeddedClusterPrivilegeTests.status(folder.path).st_uid == account.uid)
            #expect(EmbeddedClusterPrivilegeTests.uid(of: try #require(cluster.postmasterPID)) == account.uid)
        }

        let folder = Helpers.folder("pgbaduser")
        defer { Helpers.removeFolder(folder) }
        let cluster = EmbeddedPostgresCluster(dataDirectory: folder, config: EmbeddedPostgresConfig(unprivilegedUser: "not a user!"),
                                              logger: Helpers.logger)
        let error = #expect(throws: PGError.self) { try cluster.start() }
        #expect(error?.code == .clusterAccountUnavailable)
        #expect(error?.message.contains("useradd --system") == true, "\(String(describing: error))")
        #expect(cluster.role == nil)
    }
}
