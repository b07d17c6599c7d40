import Foundation
import Testing
@testable import WebSocketTransport
#if canImport(Glibc)
import Glibc
#endif

struct ListenPortProbeTests {
    /// A listening socket on 127.0.0.1 and its port.
    static func occupiedPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(listening)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func aTakenPortIsAddressAlreadyInUseOnItsAddressAndOnEveryInterface() throws {
        let (fd, port) = try Self.occupiedPort()
        defer { close(fd) }
        for host in ["127.0.0.1", "0.0.0.0", nil] {
            #expect(ListenPortProbe.bindError(host: host, port: port) == EADDRINUSE, "\(host ?? "nil")")
            #expect(ListenPortProbe.problem(host: host, port: port) == "port \(port): address already in use")
        }
    }

    @Test func aFreePortPortZeroAndAnInterfaceNameFindNothing() throws {
        let (fd, port) = try Self.occupiedPort()
        close(fd) // free again (never accepted: no TIME_WAIT)
        #expect(ListenPortProbe.problem(host: "127.0.0.1", port: port) == nil)
        #expect(ListenPortProbe.problem(host: "127.0.0.1", port: 0) == nil)
        #expect(ListenPortProbe.problem(host: "eth0", port: port) == nil)
    }
}
