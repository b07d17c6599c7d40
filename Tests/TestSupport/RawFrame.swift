/// One WebSocket frame as it travels on the wire, built and read byte by byte so that tests can break
/// every rule RFC 6455 sets (the Autobahn testsuite's cases): reserved bits and opcodes, missing
/// masks, fragmented control frames, lengths that lie.
public struct RawFrame: Equatable, Sendable {
    public var fin: Bool
    /// The three reserved bits (RSV1 = 4, RSV2 = 2, RSV3 = 1).
    public var rsv: UInt8
    public var opcode: UInt8
    public var payload: [UInt8]

    public init(opcode: UInt8, payload: [UInt8] = [], fin: Bool = true, rsv: UInt8 = 0) {
        self.opcode = opcode
        self.payload = payload
        self.fin = fin
        self.rsv = rsv
    }

    public static let continuationOpcode: UInt8 = 0, textOpcode: UInt8 = 1, binaryOpcode: UInt8 = 2
    public static let closeOpcode: UInt8 = 8, pingOpcode: UInt8 = 9, pongOpcode: UInt8 = 10

    public static func text(_ text: String, fin: Bool = true) -> RawFrame { RawFrame(opcode: textOpcode, payload: Array(text.utf8), fin: fin) }
    public static func text(bytes: [UInt8], fin: Bool = true) -> RawFrame { RawFrame(opcode: textOpcode, payload: bytes, fin: fin) }
    public static func binary(_ bytes: [UInt8], fin: Bool = true) -> RawFrame { RawFrame(opcode: binaryOpcode, payload: bytes, fin: fin) }
    public static func continuation(_ bytes: [UInt8], fin: Bool = true) -> RawFrame { RawFrame(opcode: continuationOpcode, payload: bytes, fin: fin) }
    public static func continuation(_ text: String, fin: Bool = true) -> RawFrame { continuation(Array(text.utf8), fin: fin) }
    public static func ping(_ bytes: [UInt8] = [], fin: Bool = true) -> RawFrame { RawFrame(opcode: pingOpcode, payload: bytes, fin: fin) }
    public static func pong(_ bytes: [UInt8] = [], fin: Bool = true) -> RawFrame { RawFrame(opcode: pongOpcode, payload: bytes, fin: fin) }

    /// A close frame with `code` (none: an empty payload) and `reason` bytes after it.
    public static func close(_ code: UInt16? = nil, reason: [UInt8] = []) -> RawFrame {
        RawFrame(opcode: closeOpcode, payload: code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] + reason } ?? reason)
    }

    /// The code of a close frame (nil when its payload has none).
    public var closeCode: UInt16? {
        guard opcode == Self.closeOpcode, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }

    /// The frame's bytes as a client sends them: masked (with a fixed, non-zero key so runs repeat)
    /// unless `masked` is false. `announcedLength` replaces the true payload length in the header
    /// and `forceLength64` writes it in the 8-byte form, for frames whose header lies.
    public func encoded(masked: Bool = true, announcedLength: UInt64? = nil, forceLength64: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 7) << 4 | (opcode & 0x0F)]
        let length = announcedLength ?? UInt64(payload.count)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length < 126 && !forceLength64 {
            bytes.append(maskBit | UInt8(length))
        } else if length < 65536 && !forceLength64 {
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// Parses one frame from the front of `bytes`: the frame and the bytes it took, or nil when
    /// `bytes` does not hold a whole frame yet. Server frames are unmasked; a mask is removed if present.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> (frame: RawFrame, count: Int)? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.startIndex + 1]
        var index = bytes.startIndex + 2
        var length = UInt64(second & 0x7F)
        let extra = length == 126 ? 2 : length == 127 ? 8 : 0
        guard bytes.count >= 2 + extra else { return nil }
        if extra > 0 {
            length = 0
            for _ in 0..<extra { length = length << 8 | UInt64(bytes[index]); index += 1 }
        }
        let masked = second & 0x80 != 0
        var key: [UInt8] = []
        if masked {
            guard bytes.endIndex - index >= 4 else { return nil }
            key = Array(bytes[index..<index + 4])
            index += 4
        }
        guard UInt64(bytes.endIndex - index) >= length else { return nil }
        var payload = Array(bytes[index..<index + Int(length)])
        if masked { payload = payload.enumerated().map { $0.element ^ key[$0.offset % 4] } }
        let frame = RawFrame(opcode: first & 0x0F, payload: payload, fin: first & 0x80 != 0, rsv: (first >> 4) & 7)
        return (frame, index + Int(length) - bytes.startIndex)
    }
}

/// What a server sent over a WebSocket, message by message: fragments joined, control frames as they came.
public enum WebSocketEvent: Equatable, Sendable, CustomStringConvertible {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame; `code` nil when its payload was empty.
    case close(code: UInt16?)
    /// Something a server must never send: a 1-byte close payload, an orphan continuation, a text
    /// message that is not UTF-8, reserved bits or opcodes.
    case malformed(String)

    public var description: String {
        switch self {
        case .text(let text): return "text(\(text.count > 40 ? String(text.prefix(40)) + "…(\(text.utf8.count) bytes)" : text))"
        case .binary(let bytes): return "binary(\(bytes.count) bytes)"
        case .ping(let bytes): return "ping(\(bytes.count) bytes)"
        case .pong(let bytes): return "pong(\(String(decoding: bytes, as: UTF8.self)))"
        case .close(let code): return "close(\(code.map(String.init) ?? "no code"))"
        case .malformed(let what): return "malformed(\(what))"
        }
    }

    /// Joins fragmented messages and names control frames.
    public static func events(from frames: [RawFrame]) -> [WebSocketEvent] {
        var events: [WebSocketEvent] = []
        var message: (opcode: UInt8, bytes: [UInt8])?
        for frame in frames {
            if frame.rsv != 0 { events.append(.malformed("rsv \(frame.rsv)")); continue }
            switch frame.opcode {
            case RawFrame.textOpcode, RawFrame.binaryOpcode, RawFrame.continuationOpcode:
                if frame.opcode == RawFrame.continuationOpcode {
                    guard message != nil else { events.append(.malformed("continuation without a start")); continue }
                    message!.bytes += frame.payload
                } else {
                    if message != nil { events.append(.malformed("new message inside a fragmented one")) }
                    message = (frame.opcode, frame.payload)
                }
                if frame.fin, let done = message {
                    message = nil
                    if done.opcode == RawFrame.binaryOpcode {
                        events.append(.binary(done.bytes))
                    } else if let text = String(validating: done.bytes, as: UTF8.self) {
                        events.append(.text(text))
                    } else {
                        events.append(.malformed("text that is not UTF-8"))
                    }
                }
            case RawFrame.pingOpcode: events.append(.ping(frame.payload))
            case RawFrame.pongOpcode: events.append(.pong(frame.payload))
            case RawFrame.closeOpcode:
                events.append(frame.payload.count == 1 ? .malformed("close payload of 1 byte") : .close(code: frame.closeCode))
            default: events.append(.malformed("opcode \(frame.opcode)"))
            }
        }
        return events
    }
}
