/// A reference or hypothesis file that could not be read.
///
/// `code` is stable and meant for machines; `message` is for people and names the line and the field.
public struct ScoringError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A line with fewer fields than its format requires.
        case missingField = "missing_field"
        /// A time or duration that is not a finite decimal number, or beyond 10^9 seconds.
        case invalidNumber = "invalid_number"
        /// A negative start or duration, or an end before its start.
        case invalidInterval = "invalid_interval"
    }

    public var code: Code
    public var message: String
    /// 1-based line of the offending text.
    public var lineNumber: Int
    /// The format's name of the offending field (e.g. `tdur`).
    public var field: String

    public init(_ code: Code, line lineNumber: Int, field: String, _ message: String) {
        self.code = code
        self.lineNumber = lineNumber
        self.field = field
        self.message = "line \(lineNumber), field \(field): \(message)"
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
