import PostgresClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// What the start-up check says of the role the server connects as, on real roles.
@Suite struct DatabaseRoleCheckTests {
    @Test func theEmbeddedClustersRoleHasNothingInExcess() throws {
        let check = try DatabaseRoleCheck.read(PGConnection(connectionString: TestCluster.freshDatabase()))
        #expect(check.role == TestCluster.shared.config.applicationRole)
        #expect(check.excess.isEmpty, "\(check)")
    }

    @Test func aSuperuserOrAPrivilegedRoleIsNamed() throws {
        let admin = try PGConnection(connectionString: TestCluster.shared.superuserConnectionString())
        #expect(try DatabaseRoleCheck.read(admin).excess == ["superuser"])
        let role = "rolecheck_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE ROLE \(role) CREATEDB CREATEROLE")
        defer { _ = try? admin.execute("DROP ROLE \(role)") }
        try admin.execute("GRANT pg_read_server_files TO \(role)")
        try admin.execute("SET ROLE \(role)")
        defer { _ = try? admin.execute("RESET ROLE") }
        let check = try DatabaseRoleCheck.read(admin)
        #expect(check.role == role)
        #expect(check.excess == ["CREATEROLE", "CREATEDB",
                                 "member of pg_execute_server_program/pg_read_server_files/pg_write_server_files"])
    }
}
