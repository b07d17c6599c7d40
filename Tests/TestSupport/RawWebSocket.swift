import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client that writes every byte itself, for tests of the server's RFC 6455 conformance
/// (the Autobahn testsuite's cases). Blocking: run it off Swift concurrency's pool (`Blocking.run`).
/// `@unchecked Sendable`: a test uses it from one thread at a time (it may hand it from the thread that
/// opened it to another that reads), never from two at once, so its buffers need no lock.
public final class RawWebSocket: @unchecked Sendable {
    public let connection: RawConnection
    /// The server's answer to the upgrade (status line and headers).
    public let handshake: String
    private var buffer: [UInt8] = []
    private var frames: [RawFrame] = []
    /// How the server ended the connection, once it has.
    public private(set) var end: RawConnection.End?

    /// Connects and upgrades on `path`; throws unless the server answers 101. Reads give up after
    /// `timeoutSeconds` without a byte (a bound on a hung test, never an assertion).
    public init(port: Int, path: String = "/v1/listen", headers: [(String, String)] = [], timeoutSeconds: Int = 20) throws {
        connection = try RawConnection(port: port, timeoutSeconds: timeoutSeconds)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        handshake = try connection.readHead()
        guard handshake.hasPrefix("HTTP/1.1 101") else {
            throw RawConnection.Failure(description: "upgrade refused: \(handshake.split(separator: "\r\n").first ?? "no answer")")
        }
    }

    /// Sends `frames` in one write (masked, as a client must, unless `masked` is false).
    public func send(_ frames: [RawFrame], masked: Bool = true) throws {
        noteSent(frames)
        try connection.send(bytes: frames.flatMap { $0.encoded(masked: masked) })
    }

    /// Sends each frame in a write of its own ("frame-wise chops").
    public func sendFramewise(_ frames: [RawFrame]) throws {
        noteSent(frames)
        for frame in frames { try connection.send(bytes: frame.encoded()) }
    }

    /// Sends the frames one byte per write ("octet-wise chops"), with Nagle off so that the bytes
    /// tend to reach the server in pieces.
    public func sendOctetwise(_ frames: [RawFrame]) throws {
        connection.setNoDelay()
        noteSent(frames)
        for byte in frames.flatMap({ $0.encoded() }) { try connection.send(bytes: [byte]) }
    }

    public func send(bytes: [UInt8]) throws {
        try connection.send(bytes: bytes)
    }

    /// Everything received so far, as events.
    public var events: [WebSocketEvent] { WebSocketEvent.events(from: frames) }

    /// Reads until `count` events have arrived or the server ended the connection (or the read
    /// timed out); the events so far.
    @discardableResult
    public func read(events count: Int) -> [WebSocketEvent] {
        while events.count < count, end == nil { readSome() }
        return events
    }

    /// Reads until the server ends the connection (or a read times out); every event it sent.
    ///
    /// When the server starts the closing handshake and `replyingToClose`, the client answers with a
    /// close frame of its own as RFC 6455 asks (Autobahn's client does too), so the server ends the
    /// connection at once instead of after its close timeout. Frames a server wrongly sends after its
    /// close were written before that reply reached it, so they are still read here. Tests of what a
    /// server sends late after its close pass false and wait for the server's own timeout.
    public func readToEnd(replyingToClose: Bool = true) -> [WebSocketEvent] {
        var replied = false
        while end == nil {
            readSome()
            if replyingToClose, !replied, !sentClose, frames.contains(where: { $0.opcode == RawFrame.closeOpcode }) {
                replied = true
                try? connection.send(bytes: RawFrame.close().encoded()) // the server may be gone already
            }
        }
        return events
    }

    /// Whether the client sent a close frame (through `send`, `sendFramewise` or `sendOctetwise`).
    public private(set) var sentClose = false

    private func noteSent(_ frames: [RawFrame]) {
        if frames.contains(where: { $0.opcode == RawFrame.closeOpcode }) { sentClose = true }
    }

    private func readSome() {
        switch connection.receive() {
        case .success(let bytes):
            buffer += bytes
            var offset = 0
            while let (frame, used) = RawFrame.decode(buffer[offset...]) {
                frames.append(frame)
                offset += used
            }
            buffer.removeFirst(offset)
        case .failure(let stop):
            end = stop.end
        }
    }
}
