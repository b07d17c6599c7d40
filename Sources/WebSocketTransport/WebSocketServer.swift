import Logging

/// WebSocket and HTTP on one port, served by libwebsockets on one service thread.
///
/// Threading: every method may be called from any thread. Work is queued under a mutex and the
/// service thread is woken with `lws_cancel_service`; all socket writes happen in lws WRITEABLE
/// callbacks. Handlers are called on the service thread.
///
/// HTTP connections are kept alive as the client asks (HTTP/1.1 default), except after a 413.
public final class WebSocketServer: Sendable {
    private let core: ServerCore

    /// Creates the lws context and binds the listening socket (so a busy port fails here). With
    /// `config.tls`, the certificate and key are checked and loaded here too (`tls_file_unreadable`,
    /// `tls_file_invalid`, or `context_creation_failed` when OpenSSL rejects them).
    /// - Parameter httpHandler: nil answers every plain HTTP request with a JSON 404.
    public init(config: WebSocketServerConfig = .default, webSocketHandler: any WebSocketHandler,
                httpHandler: (any HTTPHandler)?, logger: Logger) throws {
        guard (0...65535).contains(config.port) else { throw TransportError(.invalidConfig, "port \(config.port) out of range") }
        guard config.maxMessageBytes > 0, config.maxHTTPBodyBytes >= 0 else {
            throw TransportError(.invalidConfig, "size limits must be positive")
        }
        guard config.maxConnections > 0, config.handshakeTimeoutSeconds > 0, config.keepAliveTimeoutSeconds > 0,
              config.bodyDeadlineSeconds > 0, config.bodyRateWindowSeconds > 0, config.minimumBodyBytesPerSecond >= 0 else {
            throw TransportError(.invalidConfig, "connection limit and timeouts must be positive")
        }
        guard config.webSocketPath.hasPrefix("/") else {
            throw TransportError(.invalidConfig, "webSocketPath must start with /")
        }
        try config.tls?.validate()
        LWSLogRouter.install(logger)
        core = ServerCore(config: config, webSocketHandler: webSocketHandler, httpHandler: httpHandler, logger: logger)
        try core.createContext()
    }

    /// The bound port (the kernel's choice when the config asked for 0).
    public var port: Int { core.port }

    /// Spawns the service thread; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        try core.runtime.start(name: "lws-server", keepAlive: core)
        core.logger.info("websocket server listening", metadata: [
            "host": "\(core.config.host)", "port": "\(core.port)", "tls": "\(core.config.tls != nil)"])
        return core.port
    }

    /// Queues a message; FIFO per connection. Dropped if the connection is gone or closing.
    public func send(_ message: WebSocketMessage, to connection: ConnectionID) {
        if !core.runtime.send(message, to: connection.rawValue) {
            core.logger.debug("send to unknown or closing connection dropped", metadata: ["connection": "\(connection)"])
        }
    }

    /// Sends everything already queued, then a close frame with `code` and `reason` (≤123 bytes).
    public func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        core.runtime.close(connection.rawValue, code: code, reason: reason)
    }

    /// Drops what is queued for the connection and closes it with `code`; if the close frame cannot be
    /// written within a few seconds (the peer reads nothing), the socket is dropped.
    public func closeDiscardingQueued(_ connection: ConnectionID, code: UInt16, reason: String) {
        core.runtime.discardQueued(connection.rawValue)
        core.runtime.close(connection.rawValue, code: code, reason: reason)
        core.runtime.enqueue(.closeWithin(connection.rawValue, seconds: ServerCore.unreadCloseSeconds))
    }

    /// Backpressure: while paused, lws stops reading this connection's socket (`lws_rx_flow_control`).
    public func setReceivingPaused(_ paused: Bool, for connection: ConnectionID) {
        core.runtime.enqueue(.setReceiving(connection.rawValue, enabled: !paused))
    }

    /// Payload bytes queued for `connection` and not yet handed to lws.
    public func queuedBytes(for connection: ConnectionID) -> Int {
        core.runtime.queuedBytes(for: connection.rawValue)
    }

    /// Stops the service thread and destroys the context (open connections get their `closed`
    /// callbacks). Idempotent. From a handler (service thread) it only requests the stop.
    public func shutdown() {
        core.runtime?.stop() // nil when init failed before the context existed
    }

    deinit { shutdown() }
}
