/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict on purpose: no NaN/Infinity literals (JSON cannot express them), no trailing commas, no
/// comments, no leading zeros, no lone surrogates, nesting limited to `maxDepth` so a hostile
/// `[[[[…` cannot exhaust the stack. Numbers whose magnitude overflows a Double (`1e400`) are
/// rejected rather than turned into infinity. Errors carry the byte offset for the error message.
///
/// Strings PostgreSQL cannot store are told apart from syntax errors (`Failure.Kind.invalidText`,
/// with the path of the value, e.g. `words[3].text`): U+0000 (written `\u0000`), bytes that are not
/// UTF-8, and lone surrogates. They are refused at this edge so that nothing past it ever sees them.
public struct JSONParser: Sendable {
    public struct Failure: Error, Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            /// Not JSON.
            case syntax
            /// Valid JSON whose string at `path` holds text that cannot be stored (`reason` says what).
            case invalidText
        }

        public var byteOffset: Int
        public var reason: String
        public var kind: Kind = .syntax
        /// Where the failure is, as `key.sub[2].leaf` ("" for the top-level value); set for `invalidText`.
        public var path: String = ""
    }

    /// What to do with a string that holds text that cannot be stored.
    public enum InvalidTextPolicy: Sendable {
        /// Fail with `Failure.Kind.invalidText` (the default: an edge refuses such input).
        case reject
        /// Replace each offending character with U+FFFD and go on (to learn what kind of message a
        /// refused one was, so its refusal can be the right one).
        case replace
    }

    /// Deepest nesting of arrays/objects accepted.
    public var maxDepth: Int
    public var invalidText: InvalidTextPolicy

    public init(maxDepth: Int = 64, invalidText: InvalidTextPolicy = .reject) {
        self.maxDepth = maxDepth
        self.invalidText = invalidText
    }

    public func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    public func parse(bytes: [UInt8]) throws(Failure) -> JSONValue {
        var cursor = Cursor(bytes: bytes, maxDepth: maxDepth, replaceInvalidText: invalidText == .replace)
        cursor.skipWhitespace()
        let value = try cursor.parseValue(depth: 0)
        cursor.skipWhitespace()
        guard cursor.index == bytes.count else {
            throw cursor.failure("unexpected data after the top-level value")
        }
        return value
    }
}

private struct Cursor {
    enum PathElement {
        case key(String)
        case index(Int)
    }

    let bytes: [UInt8]
    let maxDepth: Int
    let replaceInvalidText: Bool
    var index = 0
    /// The keys and indexes leading to the value being parsed (for `invalidText` failures).
    var path: [PathElement] = []

    init(bytes: [UInt8], maxDepth: Int, replaceInvalidText: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.replaceInvalidText = replaceInvalidText
    }

    func failure(_ reason: String) -> JSONParser.Failure {
        JSONParser.Failure(byteOffset: index, reason: reason)
    }

    /// Text that cannot be stored: thrown, or (policy `replace`) replaced by U+FFFD.
    func invalidText(_ reason: String) throws(JSONParser.Failure) -> String {
        guard replaceInvalidText else {
            throw JSONParser.Failure(byteOffset: index, reason: reason, kind: .invalidText, path: renderedPath)
        }
        return "\u{FFFD}"
    }

    var renderedPath: String {
        var text = ""
        for element in path {
            switch element {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let position): text += "[\(position)]"
            }
        }
        return text
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParser.Failure) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(JSONParser.Failure) {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count,
            bytes[index..<(index + expected.count)].elementsEqual(expected)
        else { throw failure("invalid literal") }
        index += expected.count
    }

    mutating func parseObject(depth: Int) throws(JSONParser.Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth)") }
        index += 1  // {
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            guard object[key] == nil else { throw failure("duplicate key \"\(key)\"") }
            path.append(.key(key))
            object[key] = try parseValue(depth: depth)
            path.removeLast()
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(object)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParser.Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth)") }
        index += 1  // [
        var array: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            path.append(.index(array.count))
            array.append(try parseValue(depth: depth))
            path.removeLast()
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(array)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    mutating func parseNumber() throws(JSONParser.Failure) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw failure("invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw failure("leading zeros are not allowed") }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let next = current, isDigit(next) else { throw failure("invalid fraction") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let next = current, isDigit(next) else { throw failure("invalid exponent") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            index = start
            throw failure("number \(text) is out of range")
        }
        return value
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    mutating func parseString() throws(JSONParser.Failure) -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = index
        var result = ""
        // Copy runs of unescaped bytes in one go; only escapes are handled byte by byte.
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                try appendRun(runStart..<index, to: &result)
                index += 1
                break
            }
            if byte < 0x20 { throw failure("unescaped control character in string") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            try appendRun(runStart..<index, to: &result)
            index += 1
            guard let escape = current else { throw failure("unterminated escape") }
            index += 1
            scalars.removeAll()
            switch escape {
            case UInt8(ascii: "\""): result += "\""
            case UInt8(ascii: "\\"): result += "\\"
            case UInt8(ascii: "/"): result += "/"
            case UInt8(ascii: "b"): result += "\u{08}"
            case UInt8(ascii: "f"): result += "\u{0C}"
            case UInt8(ascii: "n"): result += "\n"
            case UInt8(ascii: "r"): result += "\r"
            case UInt8(ascii: "t"): result += "\t"
            case UInt8(ascii: "u"):
                let unit = try parseHex4()
                if (0xD800...0xDBFF).contains(unit) {
                    guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
                        bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        result += try invalidText("contains a lone surrogate (\\u\(hex(unit)))")
                        runStart = index
                        continue
                    }
                    let secondStart = index
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        // The second escape is not a low surrogate: the first stands alone; the
                        // second is read again as an escape of its own.
                        index = secondStart
                        result += try invalidText("contains a lone surrogate (\\u\(hex(unit)))")
                        runStart = index
                        continue
                    }
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw failure("invalid escape") }
                    scalars.append(scalar)
                } else if unit == 0 {
                    result += try invalidText("contains U+0000 (NUL), which cannot be stored")
                    runStart = index
                    continue
                } else {
                    guard let scalar = Unicode.Scalar(UInt32(unit)) else {
                        result += try invalidText("contains a lone surrogate (\\u\(hex(unit)))")
                        runStart = index
                        continue
                    }
                    scalars.append(scalar)
                }
                result += String(scalars)
            default:
                throw failure("invalid escape")
            }
            runStart = index
        }
        return result
    }

    /// Appends raw (unescaped) string bytes, which must be UTF-8.
    func appendRun(_ range: Range<Int>, to result: inout String) throws(JSONParser.Failure) {
        guard !range.isEmpty else { return }
        let run = bytes[range]
        // ASCII needs no validation (the common case: words, ids).
        if run.allSatisfy({ $0 < 0x80 }) || String(validating: run, as: UTF8.self) != nil {
            result += String(decoding: run, as: UTF8.self)
            return
        }
        if !replaceInvalidText {
            _ = try invalidText("is not valid UTF-8")
        }
        result += String(decoding: run, as: UTF8.self)
    }

    func hex(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    mutating func parseHex4() throws(JSONParser.Failure) -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("invalid \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}
