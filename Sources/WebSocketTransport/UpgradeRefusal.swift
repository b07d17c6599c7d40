/// A WebSocket upgrade the server answered with an HTTP status instead of 101 (a wrong path's 404, a
/// refused credential's 401, a busy server's 429 or 503). Read from the response once, here, so that
/// clients decide on the status rather than on libwebsockets' wording of the failure.
public struct UpgradeRefusal: Sendable, Equatable {
    /// The response's status code.
    public var status: Int
    /// The response's `Retry-After` header as sent (delay-seconds or an HTTP-date), if any.
    public var retryAfter: String?
    /// What libwebsockets said (`HS: ws upgrade response not 101`, `HS: ws upgrade unauthorized`).
    public var reason: String

    public init(status: Int, retryAfter: String?, reason: String) {
        self.status = status
        self.retryAfter = retryAfter
        self.reason = reason
    }
}
