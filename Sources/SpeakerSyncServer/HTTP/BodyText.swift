import SessionProtocol
import WebSocketTransport

/// Finds text PostgreSQL cannot store in a request body before any route reads it: a JSON body is
/// read with the protocol's strict parser (which names the field), a text body (RTTM) must be UTF-8
/// without NUL. Binary bodies (WAV) are not text and are left alone.
enum BodyText {
    enum Kind { case json, text }

    static func kind(_ request: HTTPRequest) -> Kind? {
        let type = request.headers["content-type"]?.lowercased() ?? ""
        if type.contains("json") { return .json }
        if type.hasPrefix("text/") { return .text }
        if type.hasPrefix("audio/") || type.contains("octet-stream") { return nil }
        // No type given: a body that opens like JSON is read as JSON; an RTTM upload is text.
        if let first = request.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
           first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return .json }
        if request.path.contains("/references/") { return .text }
        return nil
    }

    /// What is wrong with the body's text, or nil. A JSON syntax error is the route's to report.
    static func problem(_ body: [UInt8], kind: Kind) -> String? {
        switch kind {
        case .json:
            do {
                _ = try JSONParser().parse(bytes: body)
                return nil
            } catch where error.kind == .invalidText {
                return error.path.isEmpty ? "has a key that \(error.reason)" : "field \"\(error.path)\" \(error.reason)"
            } catch {
                return nil
            }
        case .text:
            if body.contains(0) { return "contains U+0000 (NUL)" }
            return String(validating: body, as: UTF8.self) == nil ? "is not valid UTF-8" : nil
        }
    }
}

/// A short random id for each HTTP request, in the response (`X-Request-Id`, and errors'
/// `request_id`) and in the log lines about it, so an operator finds the detail a client was spared.
enum RequestID {
    static func make() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
