#if canImport(WebSocketTransport)
import Logging
import Synchronization
import WebSocketTransport

/// Sockets over the libwebsockets client (Linux): one client, and its service thread, for every
/// connection the factory opens. wss:// is verified against `caFilePath` when given, else the system store.
public final class LWSSocketFactory: SessionSocketFactory {
    public let client: WebSocketClient

    /// - Parameter tls: whether wss:// is used (default: when a CA file is given); see `WebSocketClient`.
    public init(caFilePath: String? = nil, tls: Bool? = nil, logger: Logger) throws {
        client = try WebSocketClient(caFilePath: caFilePath, tls: tls, logger: logger)
    }

    /// Shares an existing client (the CLI and tests run many sessions on one).
    public init(client: WebSocketClient) {
        self.client = client
    }

    public func connect(url: String, headers: [(String, String)], events: @escaping @Sendable (SessionSocketEvent) -> Void) throws -> any SessionSocket {
        let handler = Handler(events: events)
        let id = try client.connect(url: url, headers: headers, handler: handler)
        return Socket(client: client, id: id)
    }

    private final class Handler: WebSocketClientHandler {
        let events: @Sendable (SessionSocketEvent) -> Void
        /// Set once the upgrade was refused: that event ends the connection, so the transport's
        /// `disconnected` right after it says nothing more.
        private let refused = Atomic<Bool>(false)
        init(events: @escaping @Sendable (SessionSocketEvent) -> Void) { self.events = events }
        func connected(_ connection: ConnectionID) { events(.opened) }
        func received(_ connection: ConnectionID, message: WebSocketMessage) {
            if case .text(let text) = message { events(.text(text)) }
        }
        func upgradeRefused(_ connection: ConnectionID, _ refusal: UpgradeRefusal) {
            refused.store(true, ordering: .relaxed)
            events(.upgradeRefused(status: refusal.status, retryAfter: refusal.retryAfter, reason: refusal.reason))
        }
        func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) {
            guard !refused.load(ordering: .relaxed) else { return }
            events(.closed(code: code, reason: reason))
        }
    }

    private final class Socket: SessionSocket {
        let client: WebSocketClient
        let id: ConnectionID
        init(client: WebSocketClient, id: ConnectionID) {
            self.client = client
            self.id = id
        }
        func send(text: String) { client.send(.text(text), to: id) }
        func send(binary: [UInt8]) { client.send(.binary(binary), to: id) }
        var queuedBytes: Int { client.queuedBytes(for: id) }
        func close(code: UInt16, reason: String) { client.close(id, code: code, reason: reason) }
    }
}
#endif
