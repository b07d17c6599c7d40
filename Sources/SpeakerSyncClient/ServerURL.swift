import Foundation

/// A SpeakerSync server's address as a person gives it — `http(s)://host:port` or `ws(s)://host:port`,
/// with or without `/v1/listen` — and the URLs each kind of client derives from it: HTTP and WebSocket
/// are served on one port, so any of these forms names the same server.
///
/// A path other than empty, `/` or one ending in `/v1/listen` is kept as given for the WebSocket URL,
/// so that a mistyped path (`/v1/lisen`) still reaches the server and its 404 ends the session at
/// once, instead of being quietly corrected here; the same path is the prefix of the HTTP routes.
public struct ServerURL: Sendable, Equatable, CustomStringConvertible {
    /// https:// and wss:// (TLS).
    public var isSecure: Bool
    /// `host[:port]`, as given (an IPv6 host keeps its brackets).
    public var authority: String
    /// What goes before the routes: "" for a server at the root, "/prefix" behind a reverse proxy
    /// that serves it under a path, or the unrecognised path given (never ending in "/").
    public var pathPrefix: String
    /// The WebSocket path: `pathPrefix + "/v1/listen"`, or the unrecognised path exactly as given.
    public var listenPath: String
    /// A query given with the URL, kept on the WebSocket URL only.
    public var query: String?

    public static let listenRoute = "/v1/listen"

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func invalid(_ why: String) -> Invalid {
            Invalid(description: "'\(text)' is not a server URL (\(why)); give http(s)://host:port or ws(s)://host:port, optionally ending in /v1/listen")
        }
        // A bare host:port is the everyday plaintext server.
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased() else {
            throw invalid("not a URL")
        }
        switch scheme {
        case "http", "ws": isSecure = false
        case "https", "wss": isSecure = true
        default: throw invalid("scheme \(scheme):// is neither http(s) nor ws(s)")
        }
        guard let host = components.percentEncodedHost, !host.isEmpty else { throw invalid("no host") }
        guard components.fragment == nil else { throw invalid("a fragment has no meaning here") }
        if components.user != nil || components.password != nil { throw invalid("credentials go in --token, not the URL") }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        authority = components.port.map { "\(bracketed):\($0)" } ?? bracketed
        query = components.percentEncodedQuery
        let path = components.percentEncodedPath
        let trimmedPath = path.hasSuffix("/") ? String(path.dropLast()) : path
        if trimmedPath.hasSuffix(Self.listenRoute) {
            pathPrefix = String(trimmedPath.dropLast(Self.listenRoute.count))
            listenPath = pathPrefix + Self.listenRoute
        } else {
            pathPrefix = trimmedPath
            listenPath = trimmedPath.isEmpty ? Self.listenRoute : path
        }
    }

    /// `ws(s)://host:port/v1/listen` (or the path given), for a device session.
    public var webSocketURL: String {
        "\(isSecure ? "wss" : "ws")://\(authority)\(listenPath)" + (query.map { "?" + $0 } ?? "")
    }

    /// `ws(s)://host:port[/prefix]`, for clients that add `/v1/listen` themselves (eval).
    public var webSocketBase: String { "\(isSecure ? "wss" : "ws")://\(authority)\(pathPrefix)" }

    /// `http(s)://host:port[/prefix]`, to which the HTTP routes (`/v1/conversations`, `/readyz`) are appended.
    public var httpBase: String { "\(isSecure ? "https" : "http")://\(authority)\(pathPrefix)" }

    /// The URL of one HTTP route, e.g. `http("/v1/conversations?limit=10")`.
    public func http(_ route: String) -> String { httpBase + route }

    public var description: String { httpBase }
}
