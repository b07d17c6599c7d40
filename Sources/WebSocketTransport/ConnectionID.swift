/// Identifies one connection (WebSocket or HTTP) of a server or client context.
///
/// Application code never sees an lws `wsi`: a `wsi` is only valid on the service thread and
/// until its close callback, while an ID can be held anywhere and simply stops matching once the
/// connection is gone (sends to it are dropped). IDs are unique per server/client instance and never reused.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { "c\(rawValue)" }
}
