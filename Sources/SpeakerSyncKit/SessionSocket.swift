/// One WebSocket connection as the session uses it. Events come on any thread, in order.
public protocol SessionSocket: AnyObject, Sendable {
    func send(text: String)
    func send(binary: [UInt8])
    /// Payload bytes queued and not yet written (backpressure).
    var queuedBytes: Int { get }
    func close(code: UInt16, reason: String)
}

/// What a socket reports.
public enum SessionSocketEvent: Sendable {
    case opened
    case text(String)
    /// The connection ended, or never came up (`code` nil, `reason` says why).
    case closed(code: UInt16?, reason: String?)
    /// The server answered the upgrade with this HTTP status instead of 101, with its `Retry-After`
    /// header if it sent one; the connection is over (no `closed` follows).
    case upgradeRefused(status: Int, retryAfter: String?, reason: String)
}

/// Opens sockets: libwebsockets on Linux (`LWSSocketFactory`), URLSession on Apple platforms.
public protocol SessionSocketFactory: Sendable {
    func connect(url: String, headers: [(String, String)], events: @escaping @Sendable (SessionSocketEvent) -> Void) throws -> any SessionSocket
}
