/// Writes JSON text with a caller-chosen key order, so that every message the server sends is
/// byte-for-byte deterministic (fixed field order, shortest round-trip number formatting).
///
/// Numbers: integral values below 2^53 print without a fraction ("12"), others use Swift's shortest
/// representation that reads back to the same Double ("0.1", "1e-05"). A non-finite Double cannot be
/// written as JSON; it is written as `null` so a bug upstream can never produce invalid JSON.
public struct JSONTextWriter: Sendable {
    /// The text written so far. Built as UTF-8 bytes: appending to a `String` piece by piece (its
    /// capacity and ASCII checks on every append) was most of the cost of encoding an update.
    public var text: String { String(decoding: buffer, as: UTF8.self) }
    private var buffer: [UInt8] = []
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
        buffer.reserveCapacity(256)
    }

    // MARK: containers

    public mutating func beginObject() {
        separate()
        buffer.append(UInt8(ascii: "{"))
        hasElement.append(false)
    }

    public mutating func endObject() {
        hasElement.removeLast()
        buffer.append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separate()
        buffer.append(UInt8(ascii: "["))
        hasElement.append(false)
    }

    public mutating func endArray() {
        hasElement.removeLast()
        buffer.append(UInt8(ascii: "]"))
    }

    /// Writes `"name":`; the next value written is that member's value.
    public mutating func key(_ name: String) {
        separate()
        Self.appendQuoted(name, to: &buffer, escaping: escaping)
        buffer.append(UInt8(ascii: ":"))
        // The member's value follows the colon directly, without a separator.
        pendingValueAfterKey = true
    }

    private var pendingValueAfterKey = false

    // MARK: scalars

    public mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &buffer, escaping: escaping)
    }

    public mutating func number(_ value: Double) {
        separate()
        buffer.append(contentsOf: Self.format(value).utf8)
    }

    public mutating func integer<T: BinaryInteger>(_ value: T) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separate()
        buffer.append(contentsOf: "null".utf8)
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
        if hasElement[hasElement.count - 1] { buffer.append(UInt8(ascii: ",")) }
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

    static func appendQuoted(_ string: String, to buffer: inout [UInt8], escaping: Escaping = .standard) {
        // Most strings (words, names, ids) need no escape at all: one scan of their UTF-8 bytes, then
        // one append. Per-scalar appending was most of the cost of a transcript update's encoding
        // (a session's final transcript re-sends every word; 500 of them end within a second in the
        // 500-session benchmark).
        if !needsEscaping(string, escaping: escaping) {
            buffer.append(UInt8(ascii: "\""))
            buffer.append(contentsOf: string.utf8)
            buffer.append(UInt8(ascii: "\""))
            return
        }
        appendQuotedEscaping(string, to: &buffer, escaping: escaping)
    }

    /// Whether any byte of `string` calls for an escape: a control character, `"`, `\\`, `/` (foundation),
    /// or the lead byte 0xE2 of U+2028/U+2029 (conservatively: every 0xE2 sequence takes the slow path).
    static func needsEscaping(_ string: String, escaping: Escaping) -> Bool {
        // `/` needs an escape only in the foundation escaping; otherwise the quote byte stands in (no-op).
        let slash: UInt8 = escaping == .foundation ? 0x2F : 0x22
        var string = string
        return string.withUTF8 { bytes in
            bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == slash || $0 == 0xE2 }
        }
    }

    /// The reference escaper, scalar by scalar: every string that needs an escape goes through it.
    static func appendQuotedEscaping(_ string: String, to buffer: inout [UInt8], escaping: Escaping = .standard) {
        buffer.append(UInt8(ascii: "\""))
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
        buffer.append(contentsOf: run.utf8)
        buffer.append(UInt8(ascii: "\""))
    }
}
