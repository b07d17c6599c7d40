/// Client-side WebSocket events, called on the client's service thread; must not block.
public protocol WebSocketClientHandler: AnyObject, Sendable {
    func connected(_ connection: ConnectionID)
    func received(_ connection: ConnectionID, message: WebSocketMessage)
    /// The connection ended, or never came up (then `code` is nil and `reason` says why).
    /// `code`/`reason` are what the server's close frame carried, if it sent one.
    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?)
    /// The server answered the upgrade with an HTTP status other than 101; `disconnected` (code nil)
    /// follows at once. Optional: the default does nothing.
    func upgradeRefused(_ connection: ConnectionID, _ refusal: UpgradeRefusal)
}

extension WebSocketClientHandler {
    public func upgradeRefused(_ connection: ConnectionID, _ refusal: UpgradeRefusal) {}
}
