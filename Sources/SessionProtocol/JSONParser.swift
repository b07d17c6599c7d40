/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict on purpose: no NaN/Infinity literals (JSON cannot express them), no trailing commas, no
/// comments, no leading zeros, no lone surrogates, nesting limited to `maxDepth` so a hostile
/// `[[[[…` cannot exhaust the stack. Numbers whose magnitude overflows a Double (`1e400`) are
/// rejected rather than turned into infinity. Errors carry the byte offset for the error message.
public struct JSONParser: Sendable {
    public struct Failure: Error, Hashable, Sendable {
        public var byteOffset: Int
        public var reason: String
    }

    /// Deepest nesting of arrays/objects accepted.
    public var maxDepth: Int

    public init(maxDepth: Int = 64) {
        self.maxDepth = maxDepth
    }

    public func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    public func parse(bytes: [UInt8]) throws(Failure) -> JSONValue {
        var cursor = Cursor(bytes: bytes, maxDepth: maxDepth)
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
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func failure(_ reason: String) -> JSONParser.Failure {
        JSONParser.Failure(byteOffset: index, reason: reason)
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
            object[key] = try parseValue(depth: depth)
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
            array.append(try parseValue(depth: depth))
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
                result += String(decoding: bytes[runStart..<index], as: UTF8.self)
                index += 1
                break
            }
            if byte < 0x20 { throw failure("unescaped control character in string") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            result += String(decoding: bytes[runStart..<index], as: UTF8.self)
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
                    else { throw failure("lone high surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("invalid low surrogate") }
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw failure("invalid escape") }
                    scalars.append(scalar)
                } else {
                    guard let scalar = Unicode.Scalar(UInt32(unit)) else { throw failure("lone low surrogate") }
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
