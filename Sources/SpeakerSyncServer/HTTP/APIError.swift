/// An HTTP error as clients receive it: `{"error":{"code":"…","message":"…"}}` with a 4xx/5xx status.
public struct APIError: Error, Equatable, Sendable {
    public var status: Int
    public var code: String
    public var message: String
    /// For a 405: the methods the path takes, sent as `Allow` (RFC 9110 requires it).
    public var allowedMethods: [String] = []

    public init(status: Int, code: String, message: String, allowedMethods: [String] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.allowedMethods = allowedMethods
    }

    /// A failure on the server's side, whose detail goes to the log only.
    static let internalError = APIError(status: 500, code: "internal_error", message: "the request failed on the server")

    public var jsonObject: [String: Any] { ["error": ["code": code, "message": message]] }

    /// With the request's id, which the server's log carries too.
    public func jsonObject(requestID: String) -> [String: Any] {
        ["error": ["code": code, "message": message, "request_id": requestID]]
    }
}
