/// What the server saw in a WebSocket upgrade request, handed to `WebSocketHandler.opened`.
public struct UpgradeRequest: Sendable {
    /// Decoded path without the query string, e.g. `/v1/listen`.
    public var path: String
    /// Percent-decoded query parameters; for a repeated name the last value wins.
    public var query: [String: String]
    /// Peer IP address as text, when lws could tell.
    public var remoteAddress: String?

    public init(path: String, query: [String: String], remoteAddress: String?) {
        self.path = path
        self.query = query
        self.remoteAddress = remoteAddress
    }
}
