/// Server-side WebSocket events.
///
/// All of them are called on the service thread and must not block: hand work to your own queue.
/// Calling `WebSocketServer.send`/`close` from inside them is fine.
public protocol WebSocketHandler: AnyObject, Sendable {
    /// Decides whether an upgrade on `webSocketPath` may complete (credentials, limits), before any
    /// WebSocket exists. Memory-only: it runs inside the handshake on the service thread. A refusal is
    /// answered with its HTTP status and JSON error, and the socket closed; `opened` is never called for it.
    func admit(_ connection: ConnectionID, request: UpgradeRequest) -> UpgradeAdmission
    /// The handshake on `webSocketPath` completed.
    func opened(_ connection: ConnectionID, request: UpgradeRequest)
    /// A complete message arrived (fragments reassembled, text validated as UTF-8 by lws).
    func received(_ connection: ConnectionID, message: WebSocketMessage)
    /// A message was refused (e.g. too large); the rest of it is dropped and the connection stays open.
    func rejected(_ connection: ConnectionID, reason: WebSocketRejection)
    /// The connection is gone. `code` is the close code the peer sent, if it sent one.
    func closed(_ connection: ConnectionID, code: UInt16?)
}

/// What `WebSocketHandler.admit` decides about an upgrade.
public enum UpgradeAdmission: Sendable, Equatable {
    case accept
    /// Refused with this HTTP status (401, 403, 429, 503). The response is JSON shaped like the HTTP
    /// API's errors, `{"error":{"code":…,"message":…}}`, with `Retry-After: <seconds>` when
    /// `retryAfterSeconds` is set (429 and 503 should set it). The message is shown to the client:
    /// it names the kind of failure, never a presented credential.
    case refuse(status: Int, code: String, message: String, retryAfterSeconds: Int? = nil)
}

extension WebSocketHandler {
    /// Handlers without an admission policy accept every upgrade on the WebSocket path.
    public func admit(_ connection: ConnectionID, request: UpgradeRequest) -> UpgradeAdmission { .accept }
}
