/// Answers HTTP requests that arrive on the server's port (everything but the WebSocket upgrade).
public protocol HTTPHandler: AnyObject, Sendable {
    /// Called on the service thread; must not block. `respond` may be called later from ANY thread,
    /// exactly once (later calls are ignored; a response for a connection that closed meanwhile is dropped).
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void)
}
