import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync serve` on a port another process holds stops at once and says so, instead of an
/// lws context error after starting PostgreSQL.
struct ServeBusyPortTests {
    @Test func aTakenPortEndsServeWithAddressAlreadyInUse() async throws {
        let (fd, port) = try #require(LoopbackSocket.bind(listening: true))
        defer { close(fd) }
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("busy-port-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: dataDirectory) }

        for host in ["127.0.0.1", "0.0.0.0"] {
            let result = try await CommandLineRun.run(["serve", "--host", host, "--port", "\(port)", "--auth", "off", "--data-dir", dataDirectory.path],
                                                      environment: ["DATABASE_URL": ""], timeoutSeconds: 120)
            #expect(!result.timedOut)
            #expect(result.status != 0)
            #expect(result.standardError.contains("port \(port): address already in use"), "\(host): \(result.standardError)")
        }
    }
}
