/// Listening and limit settings for `WebSocketServer`.
public struct WebSocketServerConfig: Sendable {
    /// IPv4 address to bind; "0.0.0.0" listens on all interfaces.
    public var host: String
    /// TCP port; 0 asks the kernel for a free one (`start()` returns it).
    public var port: Int
    /// The only path that accepts a WebSocket upgrade; upgrades elsewhere get a plain 404.
    public var webSocketPath: String
    /// Largest reassembled WebSocket message accepted; bigger ones go to `WebSocketHandler.rejected`.
    public var maxMessageBytes: Int
    /// Largest HTTP request body accepted; bigger ones get 413 and the connection is closed.
    public var maxHTTPBodyBytes: Int
    /// When set, the port speaks TLS only (wss:// and https://; a plaintext request gets no answer).
    public var tls: TLSFiles?

    public init(host: String = "127.0.0.1", port: Int = 0, webSocketPath: String = "/v1/listen",
                maxMessageBytes: Int = 1 << 20, maxHTTPBodyBytes: Int = 1 << 20, tls: TLSFiles? = nil) {
        self.host = host
        self.port = port
        self.webSocketPath = webSocketPath
        self.maxMessageBytes = maxMessageBytes
        self.maxHTTPBodyBytes = maxHTTPBodyBytes
        self.tls = tls
    }

    public static let `default` = WebSocketServerConfig()
}
