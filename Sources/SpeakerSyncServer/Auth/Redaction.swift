/// Secrets out of what gets logged: a request path's `token` query parameter (browsers' last-resort
/// way to present a credential) never reaches a log line.
enum Redaction {
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
