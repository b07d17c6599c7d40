import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP forwarder on a loopback port, standing for the network between a device and the server: it
/// can cut every connection at once (a tunnel, a Wi-Fi handover) while both ends stay up.
/// `@unchecked Sendable`: the listener and port are set once in init; the links are behind a Mutex.
///
/// Every `shutdown` and `close` of a link's sockets happens under that Mutex, and a link's two sockets
/// are closed together once both of its pumps have ended. A descriptor closed while another thread
/// could still shut it down is a descriptor number the process may already have reused: the server's
/// next accepted connection, in the same test process, would be cut without a byte (seen as a
/// "malformed HTTP response" in an unrelated end-to-end test).
public final class TCPProxy: @unchecked Sendable {
    public let port: Int
    private let upstreamPort: Int
    /// Where the upstream is (loopback unless told otherwise) and the local address the upstream
    /// connections are made from (nil: the kernel's choice), for a device of the fleet harness
    /// that has an address of its own on the test network.
    private let upstreamHost: String
    private let sourceAddress: String?
    private let listener: Int32
    /// One forwarded connection: its two sockets, open until both pumps have ended.
    private struct Link {
        var client: Int32
        var upstream: Int32
        var pumpsEnded = 0
    }
    private let links = Mutex<(next: UInt64, open: [UInt64: Link])>((0, [:]))
    private let stopped = Atomic<Bool>(false)

    public init(upstreamPort: Int, upstreamHost: String = "127.0.0.1", sourceAddress: String? = nil) throws {
        self.upstreamPort = upstreamPort
        self.upstreamHost = upstreamHost
        self.sourceAddress = sourceAddress
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listener = self.listener
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ok else { throw ProxyError(description: "proxy cannot listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Cuts every open connection (both directions); new connections are still accepted.
    public func dropAll() {
        // Shut down, not closed: the pumps wake up, end and close their link's sockets themselves.
        links.withLock { links in
            for link in links.open.values {
                shutdown(link.client, Int32(SHUT_RDWR))
                shutdown(link.upstream, Int32(SHUT_RDWR))
            }
        }
    }

    public struct ProxyError: Error, CustomStringConvertible {
        public var description: String
    }

    /// A TCP socket connected to 127.0.0.1:`port`, nil when nothing listens there.
    static func connectedSocket(port: Int) -> Int32? { connectedSocket(host: "127.0.0.1", port: port, source: nil) }

    /// A TCP socket connected to `host`:`port` (IPv4), from `source` when given; nil when that fails.
    static func connectedSocket(host: String, port: Int, source: String?) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                return nil
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        dropAll()
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if stopped.load(ordering: .relaxed) { return } else { continue } }
            guard let upstream = Self.connectedSocket(host: upstreamHost, port: upstreamPort, source: sourceAddress) else { close(client); continue }
            let id = links.withLock { links in
                links.next += 1
                links.open[links.next] = Link(client: client, upstream: upstream)
                return links.next
            }
            Thread.detachNewThread { [self] in pump(link: id, from: client, to: upstream) }
            Thread.detachNewThread { [self] in pump(link: id, from: upstream, to: client) }
        }
    }

    private func pump(link id: UInt64, from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            var sent = 0
            while sent < n {
                let m = buffer[sent..<n].withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard m > 0 else { break }
                sent += m
            }
            if sent < n { break }
        }
        links.withLock { links in
            guard var link = links.open[id] else { return }
            // Both still open here (closed only below, by the second pump): this wakes the other pump.
            shutdown(link.client, Int32(SHUT_RDWR))
            shutdown(link.upstream, Int32(SHUT_RDWR))
            link.pumpsEnded += 1
            if link.pumpsEnded == 2 {
                close(link.client)
                close(link.upstream)
                links.open[id] = nil
            } else {
                links.open[id] = link
            }
        }
    }
}
