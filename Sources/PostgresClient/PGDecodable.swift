import Foundation

/// A Swift type that can be decoded from a text-format result column.
///
/// Non-optional conformers throw `decode_failed` naming the column when it is NULL; use the
/// optional type (`String?.self`) to accept NULL.
public protocol PGDecodable {
    static func pgDecode(text: String?, column: String) throws -> Self
}

extension PGDecodable {
    static func nullError(_ column: String) -> PGError {
        PGError(code: .decodeFailed, message: "column \"\(column)\" is NULL but \(Self.self) was requested",
                column: column)
    }
    static func typeError(_ column: String, _ text: String) -> PGError {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return PGError(code: .decodeFailed, message: "column \"\(column)\" value '\(shown)' is not a \(Self.self)",
                       column: column)
    }
}

extension Optional: PGDecodable where Wrapped: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Wrapped? {
        guard let text else { return nil }
        return try Wrapped.pgDecode(text: text, column: column)
    }
}

extension String: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> String {
        guard let text else { throw nullError(column) }
        return text
    }
}

extension Int: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Int {
        guard let text else { throw nullError(column) }
        guard let value = Int(text) else { throw typeError(column, text) }
        return value
    }
}

extension Int64: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Int64 {
        guard let text else { throw nullError(column) }
        guard let value = Int64(text) else { throw typeError(column, text) }
        return value
    }
}

extension Double: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Double {
        guard let text else { throw nullError(column) }
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            guard let value = Double(text) else { throw typeError(column, text) }
            return value
        }
    }
}

extension Bool: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Bool {
        guard let text else { throw nullError(column) }
        switch text {
        case "t", "true": return true
        case "f", "false": return false
        default: throw typeError(column, text)
        }
    }
}

extension Date: PGDecodable {
    public static func pgDecode(text: String?, column: String) throws -> Date {
        guard let text else { throw nullError(column) }
        guard let date = PGTimestamp.parse(text) else { throw typeError(column, text) }
        return date
    }
}
