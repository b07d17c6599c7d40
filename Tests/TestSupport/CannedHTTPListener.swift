import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP listener that plays a server a client cannot get through to: it accepts every
/// connection and either never answers (a hung server, a stalled proxy) or answers each request with
/// one canned HTTP response and closes (a proxy's 503, a wrong host's 404). It counts the connections,
/// so a test can tell how often a client tried.
public final class CannedHTTPListener: Sendable {
    public let port: Int
    private let listener: Int32
    private let response: String?
    private let held = Mutex<[Int32]>([])
    private let accepted = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    /// `response`: the bytes to answer every request head with (nil: never answer; connections are
    /// held open until `stop`).
    public init(response: String?) throws {
        self.response = response
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
        guard ok else { throw RawConnection.Failure(description: "listener cannot listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Connections accepted so far.
    public var acceptedCount: Int { accepted.load(ordering: .relaxed) }

    /// Stops listening and closes every held connection.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in held.withLock({ fds -> [Int32] in defer { fds = [] }; return fds }) {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if stopped.load(ordering: .relaxed) { return } else { continue } }
            accepted.add(1, ordering: .relaxed)
            guard let response else {
                held.withLock { $0.append(client) }
                continue
            }
            Thread.detachNewThread { Self.answer(client, with: response) }
        }
    }

    /// Reads the request head, sends the canned response and closes.
    private static func answer(_ fd: Int32, with response: String) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received = [UInt8]()
        var byte: UInt8 = 0
        let blankLine = Array("\r\n\r\n".utf8)
        while received.suffix(4).elementsEqual(blankLine) == false, recv(fd, &byte, 1, 0) == 1 { received.append(byte) }
        let bytes = Array(response.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        // Let the client read the answer and close first, so it sees the response, not a reset.
        var sink = [UInt8](repeating: 0, count: 512)
        while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
        close(fd)
    }

    /// A complete HTTP/1.1 response with a small JSON body, as SpeakerSync words its refusals.
    public static func response(status: Int, reason: String, headers: [(String, String)] = []) -> String {
        let body = #"{"error":{"code":"refused","message":"canned \#(status)"}}"#
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return head + "\r\n" + body
    }
}
