/// A parsed `ws[s]://host[:port][/path][?query]` URL.
struct WebSocketURL: Equatable {
    var host: String
    var port: Int
    /// Path including the query string, as sent in the request line.
    var pathAndQuery: String
    /// `wss://`: the connection is TLS, with the server's certificate verified.
    var isSecure: Bool

    /// 443 for wss://, 80 for ws:// (the Host header leaves it out).
    var defaultPort: Int { isSecure ? 443 : 80 }

    init(_ text: String) throws {
        let rest: Substring
        if text.hasPrefix("wss://") {
            isSecure = true
            rest = text.dropFirst("wss://".count)
        } else if text.hasPrefix("ws://") {
            isSecure = false
            rest = text.dropFirst("ws://".count)
        } else {
            throw TransportError(.invalidURL, "only ws:// and wss:// URLs are supported: \(text)")
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.isEmpty { path = "/" } else if path.hasPrefix("?") { path = "/" + path }
        var host = Substring(authority)
        var port = isSecure ? 443 : 80
        if host.hasPrefix("[") { // IPv6 literal
            guard let close = host.firstIndex(of: "]") else { throw TransportError(.invalidURL, "bad IPv6 host: \(text)") }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()) else { throw TransportError(.invalidURL, "bad port: \(text)") }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]) else { throw TransportError(.invalidURL, "bad port: \(text)") }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw TransportError(.invalidURL, "missing host: \(text)") }
        guard (1...65535).contains(port) else { throw TransportError(.invalidURL, "port out of range: \(text)") }
        self.host = String(host)
        self.port = port
        self.pathAndQuery = path
    }
}
