import Foundation

/// Secrets out of what gets logged or stored: a request path's `token` query parameter (browsers'
/// last-resort way to present a credential) never reaches a log line, and secret-like session options
/// never reach the database.
enum Redaction {
    /// Option names that look like secrets (matched case-insensitively anywhere in the name).
    static let secretNameParts = ["key", "token", "secret", "password", "credential"]

    /// A start's options JSON with the values of secret-like names (at any depth) replaced by
    /// "[redacted]"; text that is not a JSON object is returned unchanged (the decoder already refused it).
    static func options(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return json }
        var changed = false
        func scrub(_ value: Any) -> Any {
            if let dictionary = value as? [String: Any] {
                var out: [String: Any] = [:]
                for (name, inner) in dictionary {
                    let lowered = name.lowercased()
                    if secretNameParts.contains(where: { lowered.contains($0) }) {
                        out[name] = "[redacted]"
                        changed = true
                    } else {
                        out[name] = scrub(inner)
                    }
                }
                return out
            }
            if let array = value as? [Any] { return array.map(scrub) }
            return value
        }
        let scrubbed = scrub(object)
        guard changed, let data = try? JSONSerialization.data(withJSONObject: scrubbed, options: [.sortedKeys]) else { return json }
        return String(decoding: data, as: UTF8.self)
    }

    /// Paths as the server logs them: the query's `token` value replaced.
    static func path(_ path: String) -> String {
        guard let mark = path.firstIndex(of: "?") else { return path }
        let query = path[path.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            pair.hasPrefix("token=") ? "token=[redacted]" : String(pair)
        }
        return String(path[..<mark]) + "?" + query.joined(separator: "&")
    }

    /// Query parameters with `token` removed (what a session keeps and may log).
    static func query(_ query: [String: String]) -> [String: String] {
        query.filter { $0.key != "token" }
    }
}
