import Foundation

/// The HTTP response a refused WebSocket upgrade gets, worded like the HTTP API's errors so that a
/// client reads both the same way: `HTTP/1.1 <status> <reason>`, `Content-Type: application/json`,
/// `{"error":{"code","message"}}` and, when the refusal says when to come back, `Retry-After` in seconds.
struct RefusedUpgradeResponse {
    let status: Int
    let reasonPhrase: String
    let headers: [(String, String)]
    let body: [UInt8]

    init(status: Int, code: String, message: String, retryAfterSeconds: Int?) {
        self.status = status
        self.reasonPhrase = Self.reasonPhrase(for: status)
        self.headers = retryAfterSeconds.map { [("retry-after", String(max(1, $0)))] } ?? []
        let error = ErrorBody(error: .init(code: code, message: message))
        // Encoding two strings cannot fail; the fallback keeps the response well-formed regardless.
        self.body = (try? Array(JSONEncoder.sortedKeys.encode(error))) ?? Array(#"{"error":{"code":"refused","message":""}}"#.utf8)
    }

    /// The reason phrases of the statuses an upgrade can be refused with (RFC 9110, RFC 6585 for 429).
    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Error"
        }
    }

    private struct ErrorBody: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
        }
        let error: Detail
    }
}

private extension JSONEncoder {
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
