import Foundation
import Testing
import TestSupport
@testable import WebSocketTransport
#if canImport(Glibc)
import Glibc
#endif

struct ListenPortProbeTests {
    /// A listening socket on 127.0.0.1 and its port.
    static func occupiedPort() throws -> (fd: Int32, port: Int) {
        try #require(LoopbackSocket.bind(listening: true))
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
