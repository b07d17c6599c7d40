/// A complete HTTP request (body fully read) as given to `HTTPHandler`.
public struct HTTPRequest: Sendable {
    /// Upper-case method: GET, POST, PUT, PATCH, DELETE, OPTIONS or HEAD.
    public var method: String
    /// Path without the query string, percent-decoded once (by lws): not to be decoded again.
    public var path: String
    /// Percent-decoded query parameters; for a repeated name the last value wins.
    public var query: [String: String]
    /// Header names in lower case (only the headers lws knows by name).
    public var headers: [String: String]
    public var body: [UInt8]
    /// Query parameters left out of `query` because their name or value is not text that can be
    /// stored (NUL, bytes that are not UTF-8), and "path" when the path is not: the application
    /// refuses the request naming them.
    public var invalidTextParameters: [String]
    /// Peer IP address as text, when lws could tell.
    public var remoteAddress: String?

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [],
                invalidTextParameters: [String] = [], remoteAddress: String? = nil) {
        self.remoteAddress = remoteAddress
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.invalidTextParameters = invalidTextParameters
    }
}
