/// Client-side WebSocket events, called on the client's service thread; must not block.
public protocol WebSocketClientHandler: AnyObject, Sendable {
    func connected(_ connection: ConnectionID)
    func received(_ connection: ConnectionID, message: WebSocketMessage)
    /// The connection ended, or never came up (then `code` is nil and `reason` says why).
    /// `code`/`reason` are what the server's close frame carried, if it sent one.
    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?)
}
