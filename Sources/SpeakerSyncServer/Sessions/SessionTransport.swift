import WebSocketTransport

/// How a session reaches its device. The server binds it to `WebSocketServer`; every call may come
/// from any thread (the transport queues the work for its service thread).
public protocol SessionTransport: Sendable {
    func send(text: String, to connection: ConnectionID)
    func close(_ connection: ConnectionID, code: UInt16, reason: String)
    func setReceivingPaused(_ paused: Bool, for connection: ConnectionID)
}

extension WebSocketServer: SessionTransport {
    public func send(text: String, to connection: ConnectionID) {
        send(.text(text), to: connection)
    }
}
