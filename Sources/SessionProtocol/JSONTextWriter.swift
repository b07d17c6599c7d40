/// Writes JSON text with a caller-chosen key order, so that every message the server sends is
/// byte-for-byte deterministic (fixed field order, shortest round-trip number formatting).
///
/// Numbers: integral values below 2^53 print without a fraction ("12"), others use Swift's shortest
/// representation that reads back to the same Double ("0.1", "1e-05"). A non-finite Double cannot be
/// written as JSON; it is written as `null` so a bug upstream can never produce invalid JSON.
public struct JSONTextWriter: Sendable {
    public private(set) var text = ""
    public let escaping: Escaping
    /// One entry per open container: whether it already holds an element (so the next needs a comma).
    private var hasElement: [Bool] = []

    /// How strings are escaped. Both read back as the same strings in every JSON parser; they differ
    /// only in which optional escapes they write.
    public enum Escaping: Sendable {
        /// `/` as is; U+2028 and U+2029 escaped, so the text is also valid JavaScript (the server's messages).
        case standard
        /// As Foundation's `JSONSerialization` writes: `/` escaped as `\/`, U+2028/2029 as is. The
        /// device's messages were written by `JSONSerialization` before `ClientMessageEncoder` existed;
        /// writing them this way kept their bytes unchanged when the codec replaced it.
        case foundation
    }

    public init(escaping: Escaping = .standard) {
        self.escaping = escaping
        text.reserveCapacity(256)
    }

    // MARK: containers

    public mutating func beginObject() {
        separate()
        text += "{"
        hasElement.append(false)
    }

    public mutating func endObject() {
        hasElement.removeLast()
        text += "}"
    }

    public mutating func beginArray() {
        separate()
        text += "["
        hasElement.append(false)
    }

    public mutating func endArray() {
        hasElement.removeLast()
        text += "]"
    }

    /// Writes `"name":`; the next value written is that member's value.
    public mutating func key(_ name: String) {
        separate()
        Self.appendQuoted(name, to: &text, escaping: escaping)
        text += ":"
        // The member's value follows the colon directly, without a separator.
        pendingValueAfterKey = true
    }

    private var pendingValueAfterKey = false

    // MARK: scalars

    public mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &text, escaping: escaping)
    }

    public mutating func number(_ value: Double) {
        separate()
        text += Self.format(value)
    }

    public mutating func integer<T: BinaryInteger>(_ value: T) {
        separate()
        text += String(value)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        text += value ? "true" : "false"
    }

    public mutating func null() {
        separate()
        text += "null"
    }

    public mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func optionalNumber(_ value: Double?) {
        if let value { number(value) } else { null() }
    }

    /// Writes any JSON value; object members are written in sorted key order (canonical form).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): self.number(number)
        case .string(let string): self.string(string)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                self.value(members[name]!)
            }
            endObject()
        }
    }

    /// Writes the comma between elements of the innermost container when one is needed.
    private mutating func separate() {
        if pendingValueAfterKey {
            pendingValueAfterKey = false
            return
        }
        guard !hasElement.isEmpty else { return }
        if hasElement[hasElement.count - 1] { text += "," }
        hasElement[hasElement.count - 1] = true
    }

    // MARK: formatting

    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            return value == 0 ? "0" : String(Int64(value))
        }
        return value.description
    }

    static func appendQuoted(_ string: String, to text: inout String, escaping: Escaping = .standard) {
        text += "\""
        var run = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": run += "\\\""
            case "\\": run += "\\\\"
            case "\n": run += "\\n"
            case "\r": run += "\\r"
            case "\t": run += "\\t"
            case "\u{08}": run += "\\b"
            case "\u{0C}": run += "\\f"
            case "/" where escaping == .foundation: run += "\\/"
            // (`where` binds to one pattern only, hence two cases.)
            case "\u{2028}" where escaping == .foundation: run.unicodeScalars.append(scalar)
            case "\u{2029}" where escaping == .foundation: run.unicodeScalars.append(scalar)
            case "\u{00}"..."\u{1F}", "\u{2028}", "\u{2029}":
                // Control characters must be escaped; U+2028/2029 too, so the text is also valid JavaScript.
                let hex = String(scalar.value, radix: 16)
                run += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: run.unicodeScalars.append(scalar)
            }
        }
        text += run
        text += "\""
    }
}
