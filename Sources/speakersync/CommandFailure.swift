import Foundation
import SpeakerSyncClient

/// A command that ran but failed (server error, bad response): printed as `Error: …`, exit code 1,
/// without the usage text that ArgumentParser adds to validation errors.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension CommandFailure {
    /// A server's refusal in its own words: `HTTP 404 (conversation_not_found): conversation x …`.
    /// The API answers errors as `{"error":{"code","message","request_id"}}`; a proxy's page is shown as text.
    init(refusal response: SimpleHTTPResponse) {
        let error = (response.json() as? [String: Any])?["error"] as? [String: Any]
        if let message = error?["message"] as? String {
            let code = (error?["code"] as? String).map { " (\($0))" } ?? ""
            self.init("HTTP \(response.status)\(code): \(message)")
        } else {
            let text = response.text.trimmingCharacters(in: .whitespacesAndNewlines)
            self.init("HTTP \(response.status)" + (text.isEmpty ? "" : ": \(text.prefix(500))"))
        }
    }
}
