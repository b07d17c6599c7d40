/// Binary data for a `bytea` column, bound and read in PostgreSQL's hex text format (`\x0a1b…`):
/// every parameter here travels as text, and hex is the format PostgreSQL itself outputs.
public struct PGBytea: Sendable, Equatable, PGEncodable, PGArrayElement, PGDecodable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    private static let digits = Array("0123456789abcdef".utf8)

    public var pgText: String {
        var text = [UInt8]()
        text.reserveCapacity(2 + bytes.count * 2)
        text += [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        for byte in bytes {
            text.append(Self.digits[Int(byte >> 4)])
            text.append(Self.digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Quoted, as every array element (the backslash escaped).
    public func appendPGArrayElement(to literal: inout String) {
        literal += "\"\\" + pgText + "\""
    }

    public static func pgDecode(text: String?, column: String) throws -> PGBytea {
        guard let text else { throw nullError(column) }
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            throw typeError(column, String(text.prefix(16)))
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { throw typeError(column, String(text.prefix(16))) }
            bytes.append(high << 4 | low)
            index += 2
        }
        return PGBytea(bytes)
    }
}
