import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a loopback port, for tests that must control every byte (a handshake
/// with custom headers, a client that sends nothing, keep-alive connections held open).
public final class RawConnection {
    private let fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Connects to 127.0.0.1:`port`; reads give up after `timeoutSeconds` (a bound, not an assertion).
    /// `sourceAddress` binds the client's end to another loopback address (127.0.0.2, say), so the
    /// server sees a second client address on the same machine.
    public init(port: Int, timeoutSeconds: Int = 30, sourceAddress: String? = nil) throws {
        fd = try Self.connectedSocket(port: port, sourceAddress: sourceAddress)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A TCP socket connected to 127.0.0.1:`port` (the caller closes it), from `sourceAddress` when given.
    static func connectedSocket(port: Int, sourceAddress: String? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        if let sourceAddress {
            var source = sockaddr_in()
            source.sin_family = sa_family_t(AF_INET)
            source.sin_addr.s_addr = inet_addr(sourceAddress)
            let bound = withUnsafePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw Failure(description: "bind to \(sourceAddress) failed: \(String(cString: strerror(errno)))")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    deinit { close(fd) }

    /// Bounds each blocking send: a peer that stopped reading makes `send` throw instead of hang.
    public func setSendTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Turns Nagle's algorithm off, so that small writes leave at once (a client sending octet by octet).
    public func setNoDelay() {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    public func send(_ text: String) throws {
        try send(bytes: Array(text.utf8))
    }

    /// Sends every byte (blocking; a send timeout, when set, makes a stalled send throw).
    public func send(bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed") }
            sent += n
        }
    }

    /// Reads until the end of a response head (a blank line) or the peer closes; the text read.
    public func readHead() throws -> String {
        var received = [UInt8]()
        var byte: UInt8 = 0
        while !received.ends(with: Array("\r\n\r\n".utf8)) {
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { break }
            guard n > 0 else { throw Failure(description: "recv failed or timed out: \(String(cString: strerror(errno)))") }
            received.append(byte)
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// How a read ended when it got no bytes.
    public enum End: Equatable, Sendable {
        /// The peer closed its end (FIN).
        case closed
        /// The peer reset the connection (RST): it closed with bytes of ours unread.
        case reset
        /// Nothing arrived within the read timeout; the connection is still open.
        case timedOut
    }

    /// Reads whatever is there (at most `maxBytes`, waiting up to the read timeout): the bytes, or how
    /// the read ended without any.
    public func receive(maxBytes: Int = 64 * 1024) -> Result<[UInt8], EndOfStream> {
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return .success(Array(buffer[..<n])) }
        if n == 0 { return .failure(EndOfStream(end: .closed)) }
        return .failure(EndOfStream(end: errno == ECONNRESET ? .reset : .timedOut))
    }

    public struct EndOfStream: Error, Equatable, Sendable {
        public var end: End
    }

    /// Reads and discards until the peer closes: true when it closed, false when the read timed out.
    public func waitUntilClosed() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    /// Reads up to and including `delimiter`; the bytes before it (a length prefix, say).
    public func read(until delimiter: UInt8) throws -> [UInt8] {
        var received = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            guard n > 0 else { throw Failure(description: n == 0 ? "the peer closed the connection" : "recv failed or timed out: \(String(cString: strerror(errno)))") }
            if byte == delimiter { return received }
            received.append(byte)
        }
    }

    /// Reads exactly `count` bytes (a response body of known length).
    public func read(count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = buffer[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure(description: "connection ended after \(got) of \(count) bytes") }
            got += n
        }
        return buffer
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
