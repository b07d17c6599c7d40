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
        // Split at the first `|` byte, not Character: a combining mark after the bar joins it into
        // one Character that is not "|", and the split moved to a later bar (found by
        // Fuzz/FuzzConversationCursor with an id starting with U+0362).
        guard let bytes = Data(base64Encoded: cursor), !bytes.contains(0),
              let bar = bytes.firstIndex(of: UInt8(ascii: "|")),
              let startedAt = String(validating: bytes[..<bar], as: UTF8.self),
              let id = String(validating: bytes[(bar + 1)...], as: UTF8.self) else { return nil }
        return (startedAt, id)
    }
}
