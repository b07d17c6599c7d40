import Foundation

/// The opaque `cursor` of GET /v1/conversations: base64 of `<started_at text>|<id>` of the last row
/// of a page, the `before` that `ConversationRepository.listConversations` continues after.
///
/// Here rather than in the HTTP layer so that the parser of this client-supplied text can be fuzzed
/// without the server (Fuzz/FuzzConversationCursor).
public enum ConversationCursor {
    public static func encode(startedAt: String, id: String) -> String {
        Data("\(startedAt)|\(id)".utf8).base64EncodedString()
    }

    /// The (started_at, id) a cursor names, or nil when it is not one this server could have issued.
    ///
    /// Its text must be UTF-8 without NUL: the two parts go to PostgreSQL as libpq parameters, C
    /// strings that a NUL would silently cut short (`AHxw`, "\0|p", found by Fuzz/FuzzConversationCursor),
    /// and bytes that are not UTF-8 were quietly replaced; neither comes from a cursor this server wrote.
    public static func decode(_ cursor: String) -> (startedAt: String, id: String)? {
        guard let bytes = Data(base64Encoded: cursor), !bytes.contains(0),
              let text = String(validating: bytes, as: UTF8.self),
              let bar = text.firstIndex(of: "|") else { return nil }
        return (String(text[..<bar]), String(text[text.index(after: bar)...]))
    }
}
