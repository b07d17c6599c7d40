import WebSocketTransport

/// How a session reaches its device. The server binds it to `WebSocketServer`; every call may come
/// from any thread (the transport queues the work for its service thread).
public protocol SessionTransport: Sendable {
    func send(text: String, to connection: ConnectionID)
    func close(_ connection: ConnectionID, code: UInt16, reason: String)
    func setReceivingPaused(_ paused: Bool, for connection: ConnectionID)
    /// Bytes queued for the connection and not yet written (the session's outgoing backlog).
    func queuedBytes(for connection: ConnectionID) -> Int
    /// Closes at once, dropping what is still queued: for a client that reads nothing, whose queue
    /// would otherwise hold the close back for ever.
    func closeDiscardingQueued(_ connection: ConnectionID, code: UInt16, reason: String)
}

extension SessionTransport {
    public func queuedBytes(for connection: ConnectionID) -> Int { 0 }
    public func closeDiscardingQueued(_ connection: ConnectionID, code: UInt16, reason: String) {
        close(connection, code: code, reason: reason)
    }
}

extension WebSocketServer: SessionTransport {
    public func send(text: String, to connection: ConnectionID) {
        send(.text(text), to: connection)
    }
}
