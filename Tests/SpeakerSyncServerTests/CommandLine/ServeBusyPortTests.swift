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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
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
