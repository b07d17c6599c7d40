/// What happens on a client connection, for `async` consumers.
public enum WebSocketClientEvent: Sendable, Equatable {
    case connected
    case message(WebSocketMessage)
    case disconnected(code: UInt16?, reason: String?)
}

/// A client connection whose events arrive as an `AsyncStream` (the CLI and tests use this).
/// The stream finishes after `.disconnected`.
public final class WebSocketClientConnection: Sendable {
    public let id: ConnectionID
    public let events: AsyncStream<WebSocketClientEvent>
    private let client: WebSocketClient

    fileprivate init(id: ConnectionID, events: AsyncStream<WebSocketClientEvent>, client: WebSocketClient) {
        self.id = id
        self.events = events
        self.client = client
    }

    public func send(_ message: WebSocketMessage) { client.send(message, to: id) }
    public func close(code: UInt16 = 1000, reason: String = "") { client.close(id, code: code, reason: reason) }
}

/// Forwards handler callbacks into an AsyncStream continuation (unbounded buffer: the service thread never waits).
private final class StreamingClientHandler: WebSocketClientHandler {
    let continuation: AsyncStream<WebSocketClientEvent>.Continuation

    init(continuation: AsyncStream<WebSocketClientEvent>.Continuation) { self.continuation = continuation }

    func connected(_ connection: ConnectionID) { continuation.yield(.connected) }
    func received(_ connection: ConnectionID, message: WebSocketMessage) { continuation.yield(.message(message)) }
    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) {
        continuation.yield(.disconnected(code: code, reason: reason))
        continuation.finish()
    }
}

extension WebSocketClient {
    /// Connects and returns a connection whose `events` stream starts with `.connected` (or ends
    /// with `.disconnected` if the connection failed).
    /// `headers` go into the upgrade request (e.g. `authorization`).
    public func connect(url: String, headers: [(String, String)] = []) throws -> WebSocketClientConnection {
        let (stream, continuation) = AsyncStream<WebSocketClientEvent>.makeStream()
        let id = try connect(url: url, headers: headers, handler: StreamingClientHandler(continuation: continuation))
        return WebSocketClientConnection(id: id, events: stream, client: self)
    }
}
