/// Server-side WebSocket events.
///
/// All four are called on the service thread and must not block: hand work to your own queue.
/// Calling `WebSocketServer.send`/`close` from inside them is fine.
public protocol WebSocketHandler: AnyObject, Sendable {
    /// The handshake on `webSocketPath` completed.
    func opened(_ connection: ConnectionID, request: UpgradeRequest)
    /// A complete message arrived (fragments reassembled, text validated as UTF-8 by lws).
    func received(_ connection: ConnectionID, message: WebSocketMessage)
    /// A message was refused (e.g. too large); the rest of it is dropped and the connection stays open.
    func rejected(_ connection: ConnectionID, reason: WebSocketRejection)
    /// The connection is gone. `code` is the close code the peer sent, if it sent one.
    func closed(_ connection: ConnectionID, code: UInt16?)
}
