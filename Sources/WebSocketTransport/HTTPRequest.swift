/// A complete HTTP request (body fully read) as given to `HTTPHandler`.
public struct HTTPRequest: Sendable {
    /// Upper-case method: GET, POST, PUT, PATCH, DELETE, OPTIONS or HEAD.
    public var method: String
    /// Decoded path without the query string.
    public var path: String
    /// Percent-decoded query parameters; for a repeated name the last value wins.
    public var query: [String: String]
    /// Header names in lower case (only the headers lws knows by name).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}
