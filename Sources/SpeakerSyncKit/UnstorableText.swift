/// Text the server cannot store. A Swift `String` can hold U+0000 (NUL); PostgreSQL's `text` cannot,
/// and the server refuses such text with `invalid_text`. (Invalid UTF-8 and lone surrogates, which the
/// server refuses too, cannot be in a `String` at all.) The kit checks before sending: a result the
/// server will never store would otherwise stay in the ledger, unconfirmed, and be resent on every
/// reconnect for the rest of the session.
enum UnstorableText {
    static func containsNUL(_ text: String) -> Bool { text.utf8.contains(0) }

    /// Why the server would refuse this ASR result; nil when it can store it.
    static func problem(resultID: String, words: [SpokenWord]) -> String? {
        if containsNUL(resultID) { return "result_id \(resultID.debugDescription) contains U+0000 (NUL)" }
        guard let index = words.firstIndex(where: { containsNUL($0.text) }) else { return nil }
        return "result \(resultID.debugDescription): word \(index) \(words[index].text.debugDescription) contains U+0000 (NUL)"
    }

    /// The first of `fields` (name, value) holding a NUL, as a message naming it; nil when none does.
    static func problem(fields: [(name: String, value: String?)]) -> String? {
        guard let field = fields.first(where: { $0.value.map(containsNUL) == true }) else { return nil }
        return "\(field.name) \(field.value!.debugDescription) contains U+0000 (NUL)"
    }

    /// What the app is told, after the problem.
    static let consequence = ", which the server cannot store; it was not sent"
}
