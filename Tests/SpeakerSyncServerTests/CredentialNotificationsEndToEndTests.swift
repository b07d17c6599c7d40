import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// Two servers on one PostgreSQL. A token created on one works on the other, and revoked on one stops
/// working on the other, through NOTIFY alone: the second server's periodic re-read is set to an hour,
/// so nothing else could have told it.
@Suite(.serialized) struct CredentialNotificationsEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// Polls `path` on `server` with `token` until it answers `status` (bounded, so a test never hangs).
    static func waitFor(_ status: Int, _ server: TestServer, token: String) async throws -> Int {
        var last = 0
        for _ in 0..<300 {
            last = try server.request("GET", "/v1/whoami", token: token).status
            if last == status { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    @Test func aTokenCreatedAndRevokedOnOneServerIsHonouredAtOnceByTheOther() async throws {
        let first = try TestServer()
        let second = try TestServer(database: first.connectionString) { $0.access.refreshSeconds = 3600 }

        let created = try first.request("POST", "/v1/devices/phone-n/tokens?label=test")
        #expect(created.status == 201)
        let object = try #require(created.json() as? [String: Any])
        let token = try #require(object["token"] as? String)
        let tokenID = try #require(object["token_id"] as? String)
        #expect(try await Self.waitFor(200, second, token: token) == 200)

        #expect(try first.request("DELETE", "/v1/devices/phone-n/tokens/\(tokenID)").status == 200)
        #expect(try await Self.waitFor(401, second, token: token) == 401)
    }
}
