/// Answers HTTP requests that arrive on the server's port (everything but the WebSocket upgrade).
public protocol HTTPHandler: AnyObject, Sendable {
    /// Called on the service thread as soon as the request line and headers are in, before the body is
    /// read; must not block (memory-only checks: credentials, rate limits). A response refuses the
    /// request at once (the body, if any, is never read and the connection closes after it); nil lets
    /// the transport read the body and call `handle`.
    func admit(_ head: HTTPRequest) -> HTTPResponse?

    /// Called on the service thread; must not block. `respond` may be called later from ANY thread,
    /// exactly once (later calls are ignored; a response for a connection that closed meanwhile is dropped).
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void)
}

extension HTTPHandler {
    /// Handlers without an admission policy read every body within the size limit.
    public func admit(_ head: HTTPRequest) -> HTTPResponse? { nil }
}
