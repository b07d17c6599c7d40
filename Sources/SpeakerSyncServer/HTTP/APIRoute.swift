/// The HTTP routes served beside the WebSocket on the same port.
public enum APIRoute: Equatable, Sendable {
    case health
    case providers
    case listConversations
    case conversation(id: String)
    case transcript(id: String)

    /// Matches a request line; unknown paths are 404 and known paths with another method 405.
    public static func match(method: String, path: String) -> Result<APIRoute, APIError> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let route: APIRoute?
        switch parts.count {
        case 1 where parts[0] == "healthz": route = .health
        case 2 where parts == ["v1", "providers"]: route = .providers
        case 2 where parts == ["v1", "conversations"]: route = .listConversations
        case 3 where parts[0] == "v1" && parts[1] == "conversations": route = .conversation(id: parts[2])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "transcript": route = .transcript(id: parts[2])
        default: route = nil
        }
        guard let route else {
            return .failure(APIError(status: 404, code: "not_found", message: "no route for \(path)"))
        }
        guard method == "GET" || method == "HEAD" else {
            return .failure(APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on \(path); use GET"))
        }
        return .success(route)
    }
}

/// An HTTP error as clients receive it: `{"error":{"code":"…","message":"…"}}` with a 4xx/5xx status.
public struct APIError: Error, Equatable, Sendable {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var jsonObject: [String: Any] { ["error": ["code": code, "message": message]] }
}
