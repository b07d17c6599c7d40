/// What the server saw in a WebSocket upgrade request, handed to `WebSocketHandler.opened`.
public struct UpgradeRequest: Sendable {
    /// Decoded path without the query string, e.g. `/v1/listen`.
    public var path: String
    /// Percent-decoded query parameters; for a repeated name the last value wins.
    public var query: [String: String]
    /// Peer IP address as text, when lws could tell.
    public var remoteAddress: String?
    /// Request header names in lower case (only the headers lws knows by name: `authorization` and
    /// `sec-websocket-protocol` among them), for the handler's admission check.
    public var headers: [String: String]
    /// Query parameters left out of `query` because their name or value is not text that can be
    /// stored (NUL, bytes that are not UTF-8): the application refuses them by name.
    public var invalidTextParameters: [String]

    public init(path: String, query: [String: String], remoteAddress: String?, headers: [String: String] = [:],
                invalidTextParameters: [String] = []) {
        self.path = path
        self.query = query
        self.remoteAddress = remoteAddress
        self.headers = headers
        self.invalidTextParameters = invalidTextParameters
    }
}
