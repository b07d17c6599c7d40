/// Why the transport refused an incoming message. The transport drops the offending message and keeps
/// the connection open; the handler decides what to do (typically an error frame, then a close).
public enum WebSocketRejection: Sendable, Equatable {
    /// The message grew beyond `limit` bytes. `byteCount` is what the transport knew when it gave up:
    /// the bytes received so far plus the announced rest of the current frame, so it is a lower bound
    /// for fragmented messages.
    case messageTooLarge(byteCount: Int, limit: Int)

    /// Stable code for logs and error frames.
    public var code: String {
        switch self {
        case .messageTooLarge: return "message_too_large"
        }
    }
}
