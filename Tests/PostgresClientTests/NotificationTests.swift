import Testing
import TestSupport
@testable import PostgresClient

/// LISTEN/NOTIFY through libpq: what another session notifies reaches a listener, only after it
/// commits, and a wait with nothing sent ends empty.
struct NotificationTests {
    @Test func aCommittedNotifyReachesTheListenerAndAnUncommittedOneDoesNot() throws {
        let url = try TestCluster.freshDatabase()
        let listener = try PGConnection(connectionString: url)
        try listener.listen("speakersync test")
        #expect(try listener.notifications(timeoutSeconds: 0.05).isEmpty)

        let sender = try PGConnection(connectionString: url)
        try sender.execute("BEGIN")
        try sender.execute("SELECT pg_notify($1, $2)", ["speakersync test", "first"])
        // NOTIFY is transactional: nothing is delivered before the commit.
        #expect(try listener.notifications(timeoutSeconds: 0.2).isEmpty)
        try sender.execute("COMMIT")
        try sender.execute("SELECT pg_notify($1, $2)", ["other channel", "ignored"])
        try sender.execute("SELECT pg_notify($1, $2)", ["speakersync test", "second"])

        var received: [PGNotification] = []
        for _ in 0..<50 where received.count < 2 {
            received += try listener.notifications(timeoutSeconds: 0.2)
        }
        #expect(received.map(\.channel) == ["speakersync test", "speakersync test"])
        #expect(received.map(\.payload) == ["first", "second"])
        #expect(received.allSatisfy { $0.senderProcessID > 0 })
    }
}
