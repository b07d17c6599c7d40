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
    /// Connections (HTTP or WebSocket) served at once; a request or upgrade on one more connection gets
    /// 503 `server_busy` and that connection is closed. Connections that never send a complete request
    /// do not count: `handshakeTimeoutSeconds` ends them.
    public var maxConnections: Int
    /// Connections one client address may hold at once (0: no cap); beyond it 429
    /// `too_many_connections`. Behind a reverse proxy every client has the proxy's address: raise it
    /// (or set 0) and let the proxy limit per client.
    public var maxConnectionsPerAddress: Int
    /// HTTP requests one credential (`Authorization` value) may have in flight at once, from the end
    /// of their headers to the end of their answer (0: no cap); beyond it 429 `too_many_requests_in_flight`.
    public var maxRequestsInFlightPerCredential: Int
    /// How long a new connection may take to send a complete request (headers and upgrade), and so how
    /// long an idle unauthenticated socket lives (lws `timeout_secs`).
    public var handshakeTimeoutSeconds: Int
    /// How long an idle HTTP/1.1 keep-alive connection is kept between requests (lws `keepalive_timeout`).
    public var keepAliveTimeoutSeconds: Int
    /// How long an HTTP request body may take in all, from the end of its headers (which
    /// `handshakeTimeoutSeconds` bounds as a whole: lws does not restart that wait per byte). A body
    /// still incomplete then gets 408 `request_timeout` and the connection closes.
    public var bodyDeadlineSeconds: Int
    /// The slowest an HTTP request body may arrive, measured over each `bodyRateWindowSeconds`: a client
    /// trickling a body a byte at a time would otherwise hold its connection for as long as it likes
    /// (lws restarts its own timeout on every byte). Slower bodies get 408 `request_timeout`. 0: no minimum.
    public var minimumBodyBytesPerSecond: Int
    public var bodyRateWindowSeconds: Int
    /// How long the HTTP handler may take to answer a complete request. lws keeps a timeout of its own
    /// on a connection holding request headers (`handshakeTimeoutSeconds`) and drops the socket
    /// without a word when it fires; the server replaces it with this one, which answers 503
    /// `response_timeout` and closes the connection. Handlers bound their own work well below it.
    public var responseDeadlineSeconds: Int
    /// Extra WebSocket subprotocol names the server accepts besides its own (`speakersync`), e.g.
    /// `token` for browsers that present a credential as `Sec-WebSocket-Protocol: token, <credential>`:
    /// lws answers with the first offered name it knows, which is what a browser requires.
    public var extraSubprotocols: [String]
    /// When set, the port speaks TLS only (wss:// and https://; a plaintext request gets no answer).
    public var tls: TLSFiles?

    public init(host: String = "127.0.0.1", port: Int = 0, webSocketPath: String = "/v1/listen",
                maxMessageBytes: Int = 1 << 20, maxHTTPBodyBytes: Int = 1 << 20, maxConnections: Int = 1024,
                handshakeTimeoutSeconds: Int = 10, keepAliveTimeoutSeconds: Int = 5, bodyDeadlineSeconds: Int = 120,
                minimumBodyBytesPerSecond: Int = 1024, bodyRateWindowSeconds: Int = 10, responseDeadlineSeconds: Int = 120,
                extraSubprotocols: [String] = [], tls: TLSFiles? = nil,
                maxConnectionsPerAddress: Int = 256, maxRequestsInFlightPerCredential: Int = 16) {
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxRequestsInFlightPerCredential = maxRequestsInFlightPerCredential
        self.host = host
        self.port = port
        self.webSocketPath = webSocketPath
        self.maxMessageBytes = maxMessageBytes
        self.maxHTTPBodyBytes = maxHTTPBodyBytes
        self.maxConnections = maxConnections
        self.handshakeTimeoutSeconds = handshakeTimeoutSeconds
        self.keepAliveTimeoutSeconds = keepAliveTimeoutSeconds
        self.bodyDeadlineSeconds = bodyDeadlineSeconds
        self.minimumBodyBytesPerSecond = minimumBodyBytesPerSecond
        self.bodyRateWindowSeconds = bodyRateWindowSeconds
        self.responseDeadlineSeconds = responseDeadlineSeconds
        self.extraSubprotocols = extraSubprotocols
        self.tls = tls
    }

    public static let `default` = WebSocketServerConfig()
}
