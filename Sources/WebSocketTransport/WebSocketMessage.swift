/// One complete WebSocket message (fragments already reassembled, or to be fragmented by the transport).
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])

    /// Payload size on the wire, used for queue accounting and size limits.
    public var byteCount: Int {
        switch self {
        case .text(let string): return string.utf8.count
        case .binary(let bytes): return bytes.count
        }
    }
}
