import Testing
@testable import PostgresClient

/// The authentication files and the password file, as text.
@Suite struct ClusterAuthenticationTests {
    @Test func theRulesTrustNoOne() {
        let rules = ClusterAuthentication.hostBasedRules(superuser: "postgres")
        #expect(ClusterAuthentication.trustRules(in: rules).isEmpty)
        #expect(rules.contains("local   all   \"postgres\"   peer map=speakersync_owner"))
        #expect(rules.contains("local   all   all   scram-sha-256"))
        let map = ClusterAuthentication.identityMap(ownerUser: "root", superuser: "postgres")
        #expect(map.contains("speakersync_owner   \"root\"   \"postgres\""))
    }

    @Test func trustIsFoundInWhatInitdbWrote() {
        let initdb = """
            # "local" is for Unix domain socket connections only
            local   all             all                                     trust
            # IPv4 local connections:
            host    all             all             127.0.0.1/32            trust
            host    all             all             ::1/128                 scram-sha-256
            #local  all             all                                     trust
            """
        #expect(ClusterAuthentication.trustRules(in: initdb) == [
            "local   all             all                                     trust",
            "host    all             all             127.0.0.1/32            trust",
        ])
        // A database or role named "trust" is not the method.
        #expect(ClusterAuthentication.trustRules(in: "local trust trust scram-sha-256").isEmpty)
    }

    @Test func namesThatCannotBeTokensAreRefused() {
        #expect(ClusterAuthentication.isWritable("speakersync"))
        #expect(!ClusterAuthentication.isWritable("a\"b"))
        #expect(!ClusterAuthentication.isWritable("a\nb"))
        #expect(!ClusterAuthentication.isWritable(""))
    }

    @Test func thePasswordFileRoundTrips() {
        let line = ClusterPasswordFile.line(role: "odd:role\\", password: "pa:ss")
        #expect(line == "*:*:*:odd\\:role\\\\:pa\\:ss")
        #expect(ClusterPasswordFile.password(in: "# note\n*:*:*:other:x\n" + line + "\n", role: "odd:role\\") == "pa:ss")
        #expect(ClusterPasswordFile.password(in: "db:5432:*:speakersync_app:x\n", role: "speakersync_app") == nil)
        let generated = ClusterPasswordFile.newPassword()
        #expect(generated.count == 64 && generated.allSatisfy(\.isHexDigit))
        #expect(generated != ClusterPasswordFile.newPassword())
    }
}
