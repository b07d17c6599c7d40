import Logging

/// A WebSocket client: one lws client context with its own service thread, holding any number of
/// connections. Same threading rules as `WebSocketServer`. `ws://` and `wss://`; a wss:// server's
/// certificate must chain to a trusted CA and name the URL's host (there is no way to turn that off:
/// for a self-signed server, pass its certificate as `caFilePath`).
public final class WebSocketClient: Sendable {
    private let core: ClientCore

    /// - Parameters:
    ///   - maxMessageBytes: incoming messages above this close the connection with 1009.
    ///   - caFilePath: PEM certificates that are the only trust anchors for wss:// servers; nil uses the
    ///     OS trust store. Checked here (`tls_file_unreadable`, `tls_file_invalid`).
    ///   - tls: whether this client can open wss:// connections; default: when a CA file is given.
    ///     A TLS client context is not free here: lws 4.1.6 makes creating one wait for every wss://
    ///     handshake in flight in the process (`TLSHandshakeGate`), so plain ws:// clients skip TLS.
    public init(maxMessageBytes: Int = 64 << 20, caFilePath: String? = nil, tls: Bool? = nil, logger: Logger) throws {
        if let caFilePath { try TLSFiles.validateCAFile(caFilePath) }
        LWSLogRouter.install(logger)
        core = ClientCore(maxMessageBytes: maxMessageBytes, caFilePath: caFilePath, tls: tls ?? (caFilePath != nil), logger: logger)
        try core.createContext()
        try core.runtime.start(name: "lws-client", keepAlive: core)
    }

    /// Starts connecting and returns at once; the outcome arrives as `connected` or `disconnected`.
    /// Messages sent before the handshake completes are queued. Throws only for a malformed URL or
    /// a client that was shut down. `headers` go into the upgrade request (e.g. `authorization`).
    public func connect(url: String, headers: [(String, String)] = [], handler: some WebSocketClientHandler) throws -> ConnectionID {
        let parsed = try WebSocketURL(url)
        let id = core.nextID.add(1, ordering: .relaxed).newValue
        core.runtime.openOutbox(id)
        guard core.runtime.enqueue(.connect(id, parsed, headers: headers, handler)) else {
            core.runtime.removeOutbox(id)
            throw TransportError(.shutDown, "client was shut down")
        }
        return ConnectionID(rawValue: id)
    }

    /// Queues a message; FIFO per connection.
    public func send(_ message: WebSocketMessage, to connection: ConnectionID) {
        if !core.runtime.send(message, to: connection.rawValue) {
            core.logger.debug("send to unknown or closing connection dropped", metadata: ["connection": "\(connection)"])
        }
    }

    /// Sends everything queued, then a close frame with `code` and `reason`.
    public func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        core.runtime.close(connection.rawValue, code: code, reason: reason)
    }

    public func queuedBytes(for connection: ConnectionID) -> Int {
        core.runtime.queuedBytes(for: connection.rawValue)
    }

    /// Stops the service thread and destroys the context (open connections get `disconnected`). Idempotent.
    public func shutdown() {
        core.runtime?.stop() // nil when init failed before the context existed
    }

    deinit { shutdown() }
}
