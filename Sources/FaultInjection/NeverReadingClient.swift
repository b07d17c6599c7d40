import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A client that upgrades, starts a session and then sends words as fast as the socket takes them,
/// never reading a byte: the server's answers pile up on its side. The server must pause reading it,
/// cut it off (`slow_reader`, 4008) and give the memory back.
public final class NeverReadingClient: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The device its sessions start as unless told otherwise: its token must be that device's.
    public static let deviceID = "never-reads"
    /// Bytes of one words message it sends (about; for the figure of what it pushed).
    public static let bytesPerMessage = 2_900

    /// Floods `port` for up to `seconds` and returns the words messages it got out. A send the server
    /// stops reading blocks; the client keeps trying (it never gives up on its own before the
    /// deadline), so it ends only when the server cuts it off or the time is up.
    public static func flood(port: Int, token: String, seconds: Double, deviceID: String = NeverReadingClient.deviceID) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect failed") }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try send(fd, Array(("GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n").utf8))
        // Read the handshake's answer only; after it, nothing is ever read again.
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            guard recv(fd, &byte, 1, 0) == 1 else { throw Failure(description: "no handshake answer") }
            head.append(byte)
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw Failure(description: "upgrade refused: \(String(decoding: head.prefix(40), as: UTF8.self))")
        }
        let conversation = "never-reads-\(UInt32.random(in: 0...UInt32.max))"
        try send(fd, WebSocketFrames.masked(opcode: 0x1, Array(#"{"type":"start","device_id":"\#(deviceID)","provider":"device","sample_rate":16000,"encoding":"pcm_s16le","conversation_id":"\#(conversation)"}"#.utf8)))
        try send(fd, WebSocketFrames.masked(opcode: 0x1, Array(#"{"type":"segments","segments":[{"speaker":"A","start":0,"end":100000}]}"#.utf8)))
        let deadline = Date().addingTimeInterval(seconds)
        var batch = 0
        while Date() < deadline {
            let words = (0..<50).map { #"{"text":"n\#(batch)x\#($0)","start":\#(Double(batch) * 15 + Double($0) * 0.3),"end":\#(Double(batch) * 15 + Double($0) * 0.3 + 0.2)}"# }
            let message = #"{"type":"words","result_id":"n\#(batch)","final":true,"words":[\#(words.joined(separator: ","))]}"#
            guard send(fd, WebSocketFrames.masked(opcode: 0x1, Array(message.utf8)), until: deadline) else { break }
            batch += 1
        }
        return batch
    }

    /// Sends all of `bytes`, retrying sends that time out (the server paused reading) until
    /// `deadline`; false once the connection is gone or the deadline passed.
    private static func send(_ fd: Int32, _ bytes: [UInt8], until deadline: Date) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, Date() < deadline {
                continue
            } else {
                return false
            }
        }
        return true
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send stalled or failed") }
            sent += n
        }
    }
}

/// Client frames as RFC 6455 §5.2 lays them out (final, masked), for clients that write raw bytes.
public enum WebSocketFrames {
    public static func masked(opcode: UInt8, _ payload: [UInt8], mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }
}
