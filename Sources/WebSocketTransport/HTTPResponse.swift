/// An HTTP response. The transport adds `Content-Length` itself (and `Content-Type` from `contentType`);
/// `headers` are extra headers written in order.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, contentType: String = "application/octet-stream", headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// A JSON response; `data` must already be encoded JSON.
    public static func json(status: Int = 200, _ data: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", headers: headers, body: data)
    }

    /// A JSON response from a JSON string.
    public static func json(status: Int = 200, _ json: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", headers: headers, body: Array(json.utf8))
    }

    /// A UTF-8 text response (`text/plain` unless another text type is given, e.g. `text/vtt`).
    public static func text(status: Int = 200, _ text: String, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, headers: headers, body: Array(text.utf8))
    }

    /// The transport's own plain 404, used when no handler is installed.
    static let notFound = HTTPResponse.json(status: 404, #"{"error":{"code":"not_found","message":"no such route"}}"#)
}
