// ConversationCursor, the reader of the `cursor` parameter of GET /v1/conversations, which goes
// on to PostgreSQL as query parameters.
//
// Properties: what a cursor decodes to is text libpq can pass on whole (no NUL, which would end
// its C string early) and encodes to a cursor that decodes to the same; and any started_at
// without `|` and any id (the input's two lines) survive an encode and decode unchanged.
import SpeakerSyncStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let (startedAt, id) = ConversationCursor.decode(text) {
        guard !startedAt.unicodeScalars.contains("\0"), !id.unicodeScalars.contains("\0") else {
            fatalError("a cursor decodes to text with NUL: \(startedAt.debugDescription) \(id.debugDescription)")
        }
        guard let again = ConversationCursor.decode(ConversationCursor.encode(startedAt: startedAt, id: id)),
            again == (startedAt, id)
        else { fatalError("re-encoding a decoded cursor changed it") }
    }
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    // Scalars, not Characters: U+0600 before a bar makes one Character of the two, yet a bar it is.
    var startedAt = String.UnicodeScalarView(), id = String.UnicodeScalarView()
    startedAt.append(contentsOf: lines[0].unicodeScalars.filter { $0 != "|" && $0 != "\0" })
    if lines.count > 1 { id.append(contentsOf: lines[1].unicodeScalars.filter { $0 != "\0" }) }
    let row = (startedAt: String(startedAt), id: String(id))
    guard let decoded = ConversationCursor.decode(ConversationCursor.encode(startedAt: row.startedAt, id: row.id)),
        decoded == row
    else { fatalError("(\(row.startedAt.debugDescription), \(row.id.debugDescription)) does not survive a cursor") }
    return 0
}
