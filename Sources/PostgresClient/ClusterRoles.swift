import Foundation
import Logging

/// The roles of the embedded cluster, set up by its owner over the superuser connection at every
/// start (each step does nothing when already done, so an interrupted start is finished by the next):
///
/// 1. the application role (`speakersync_app`): LOGIN, and nothing more: not a superuser, no
///    CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS. Its password is set from the password file
///    (as a SCRAM verifier computed here), so the file is always the truth;
/// 2. the database, created owned by that role, or handed to it;
/// 3. inside the database, every table, view, sequence, function, type and schema that another role
///    owns is handed to it: a cluster an earlier SpeakerSync set up has all of them owned by the
///    superuser, and the server's migrations must be able to alter them.
///
/// The server then connects as the application role only. Being neither a superuser nor a member of
/// pg_execute_server_program, pg_read_server_files or pg_write_server_files, it cannot run
/// programs (`COPY … FROM PROGRAM`) or read the server's files.
struct ClusterRoles {
    let config: EmbeddedPostgresConfig
    let logger: Logger

    /// `admin`: a superuser connection to any database; `connectToDatabase`: a superuser connection
    /// to the application database.
    func apply(admin: PGConnection, password: String, connectToDatabase: () throws -> PGConnection) throws {
        try ensureApplicationRole(admin, password: password)
        try ensureDatabase(admin)
        let database = try connectToDatabase()
        let handedOver = try handOverObjects(database)
        if handedOver > 0 {
            logger.notice("the embedded PostgreSQL's objects now belong to the server's role (they belonged to the superuser)",
                          metadata: ["role": "\(config.applicationRole)", "objects": "\(handedOver)"])
        }
    }

    private var role: String { PGConnection.quoteIdentifier(config.applicationRole) }

    private func ensureApplicationRole(_ admin: PGConnection, password: String) throws {
        let attributes = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS"
        let verifier = try admin.quoteLiteral(admin.scramVerifier(password: password, role: config.applicationRole))
        let exists = try admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [config.applicationRole]).rowCount > 0
        // ALTER/CREATE ROLE take no bind parameters: the role is a quoted identifier, the password a
        // literal holding only its verifier.
        if exists {
            try admin.execute("ALTER ROLE \(role) \(attributes) PASSWORD \(verifier)")
        } else {
            try admin.execute("CREATE ROLE \(role) \(attributes) PASSWORD \(verifier)")
            logger.info("created the embedded PostgreSQL's application role", metadata: ["role": "\(config.applicationRole)"])
        }
    }

    private func ensureDatabase(_ admin: PGConnection) throws {
        let database = PGConnection.quoteIdentifier(config.databaseName)
        let found = try admin.query("""
            SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1
            """, [config.databaseName])
        guard found.rowCount > 0 else {
            try admin.execute("CREATE DATABASE \(database) OWNER \(role) ENCODING 'UTF8' TEMPLATE template0")
            logger.info("created database", metadata: ["database": "\(config.databaseName)", "owner": "\(config.applicationRole)"])
            return
        }
        if try found[0].decode(String.self, column: "owner") != config.applicationRole {
            try admin.execute("ALTER DATABASE \(database) OWNER TO \(role)")
            logger.notice("the database now belongs to the server's role", metadata: [
                "database": "\(config.databaseName)", "owner": "\(config.applicationRole)"])
        }
    }

    /// Hands the database's objects to the application role; returns how many changed hands.
    /// The statements are composed by the server (`format` with `%I` and regclass/regprocedure/
    /// regtype names, all quoted as identifiers), from the catalogue, with the role as a parameter.
    /// Objects of extensions are left alone (their extension owns them).
    private func handOverObjects(_ database: PGConnection) throws -> Int {
        try database.transaction { connection in
            var count = 0
            // Tables first: their indexes, TOAST tables and the sequences of their serial or identity
            // columns follow them, and those sequences cannot be handed over on their own.
            for query in Self.handOverQueries {
                let statements = try connection.query(query, [config.applicationRole]).rows
                    .map { try $0.decode(String.self, column: "statement") }
                for statement in statements { try connection.execute(statement) }
                count += statements.count
            }
            return count
        }
    }

    private static let userObjects = """
        n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp)'
        """

    private static func notInExtension(_ catalog: String, _ column: String) -> String {
        "NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '\(catalog)'::regclass AND d.objid = \(column) AND d.deptype = 'e')"
    }

    static let handOverQueries = [
        """
        SELECT format('ALTER SCHEMA %I OWNER TO %I', n.nspname, $1::text) AS statement
        FROM pg_namespace n
        WHERE \(userObjects) AND n.nspname <> 'public' AND pg_get_userbyid(n.nspowner) <> $1::text
          AND \(notInExtension("pg_namespace", "n.oid"))
        """,
        """
        SELECT format('ALTER TABLE %s OWNER TO %I', c.oid::regclass, $1::text) AS statement
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE \(userObjects) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_get_userbyid(c.relowner) <> $1::text
          AND \(notInExtension("pg_class", "c.oid"))
        ORDER BY c.oid
        """,
        """
        SELECT format('ALTER SEQUENCE %s OWNER TO %I', c.oid::regclass, $1::text) AS statement
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE \(userObjects) AND c.relkind = 'S' AND pg_get_userbyid(c.relowner) <> $1::text
          AND \(notInExtension("pg_class", "c.oid"))
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
        """,
        """
        SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, $1::text) AS statement
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE \(userObjects) AND p.prokind IN ('f', 'p') AND pg_get_userbyid(p.proowner) <> $1::text
          AND \(notInExtension("pg_proc", "p.oid"))
        """,
        """
        SELECT format(CASE t.typtype WHEN 'd' THEN 'ALTER DOMAIN %s OWNER TO %I' ELSE 'ALTER TYPE %s OWNER TO %I' END,
                      t.oid::regtype, $1::text) AS statement
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE \(userObjects) AND pg_get_userbyid(t.typowner) <> $1::text
          AND (t.typtype IN ('e', 'd', 'r')
               OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c'))
          AND \(notInExtension("pg_type", "t.oid"))
        """,
    ]
}
