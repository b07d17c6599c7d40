import Logging
import PostgresClient

/// What the role the server connects as may do beyond owning its database. The server needs no
/// more than that (docs/security.md, "PostgreSQL"); a superuser, or a member of the roles that run
/// programs and read or write the database server's files, turns any flaw into the server host's
/// files and shell. Checked once at start: a warning, not a refusal, since a DATABASE_URL
/// deployment may have its reasons.
struct DatabaseRoleCheck: Sendable, Equatable {
    var role: String
    var superuser: Bool
    var createsRoles: Bool
    var createsDatabases: Bool
    /// Member of pg_execute_server_program, pg_read_server_files or pg_write_server_files.
    var reachesServerHost: Bool

    /// The connected role's privileges (`current_user`).
    static func read(_ connection: PGConnection) throws -> DatabaseRoleCheck {
        let row = try connection.query("""
            SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
                   EXISTS (SELECT 1 FROM pg_roles g
                           WHERE g.rolname IN ('pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files')
                             AND pg_has_role(r.oid, g.oid, 'MEMBER')) AS host_access
            FROM pg_roles r WHERE r.rolname = current_user
            """)[0]
        return DatabaseRoleCheck(role: try row.decode(String.self, column: "rolname"),
                                 superuser: try row.decode(Bool.self, column: "rolsuper"),
                                 createsRoles: try row.decode(Bool.self, column: "rolcreaterole"),
                                 createsDatabases: try row.decode(Bool.self, column: "rolcreatedb"),
                                 reachesServerHost: try row.decode(Bool.self, column: "host_access"))
    }

    /// What the role may do that the server does not need; empty for a least-privileged role.
    var excess: [String] {
        if superuser { return ["superuser"] }
        return [createsRoles ? "CREATEROLE" : nil, createsDatabases ? "CREATEDB" : nil,
                reachesServerHost ? "member of pg_execute_server_program/pg_read_server_files/pg_write_server_files" : nil]
            .compactMap { $0 }
    }

    /// Logs a warning when the connected role has more than the server needs. A failed check is
    /// only logged: it must not keep a working server from starting.
    static func warnIfPrivileged(_ connection: PGConnection, logger: Logger) {
        do {
            let check = try read(connection)
            guard !check.excess.isEmpty else { return }
            logger.warning("""
                the server connects to PostgreSQL as a role with more privileges than it needs; give it a role that only \
                owns its database (docs/security.md, "PostgreSQL")
                """,
                           metadata: ["role": "\(check.role)", "privileges": "\(check.excess.joined(separator: ", "))"])
        } catch {
            logger.debug("could not read the database role's privileges", metadata: ["error": "\(error)"])
        }
    }
}
