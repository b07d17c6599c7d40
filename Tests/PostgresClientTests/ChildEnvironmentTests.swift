import Testing
@testable import PostgresClient

/// The cluster's children start from an allowlist, whatever this process holds.
@Suite struct ChildEnvironmentTests {
    @Test func onlyTheAllowlistPasses() {
        let inherited = [
            "PATH": "/opt/swift/usr/bin:/usr/bin", "TZ": "Europe/Madrid", "HOME": "/root", "LANG": "de_DE.UTF-8",
            "SPEAKERSYNC_ADMIN_KEY": "ssa_secret", "DATABASE_URL": "postgresql://u:pw@db/x", "PICOVOICE_ACCESS_KEY": "pv",
            "PGPASSWORD": "pw", "PGDATA": "/elsewhere", "LD_PRELOAD": "/tmp/evil.so", "AWS_SECRET_ACCESS_KEY": "aws",
        ]
        let environment = ChildEnvironment.curated(inherited: inherited, home: "/nonexistent")
        #expect(environment == ["PATH": "/opt/swift/usr/bin:/usr/bin", "TZ": "Europe/Madrid", "HOME": "/nonexistent",
                                "LANG": "C", "LC_ALL": "C"])
        #expect(ChildEnvironment.entries(environment).first == "HOME=/nonexistent")
    }

    @Test func withoutPathOrZoneTheDefaultsApply() {
        let environment = ChildEnvironment.curated(inherited: ["DATABASE_URL": "x"], home: nil)
        #expect(environment == ["PATH": ChildEnvironment.defaultPath, "LANG": "C", "LC_ALL": "C"])
    }
}
