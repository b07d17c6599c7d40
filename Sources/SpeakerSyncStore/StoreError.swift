/// A store failure with a stable code; the underlying PostgreSQL error, when there is one, is in `message`.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case invalidMigration = "invalid_migration"
        case writeFailed = "write_failed"
        case shutDown = "shut_down"
        case invalidCursor = "invalid_cursor"
        /// A stored value could not be read back (names the column).
        case invalidData = "invalid_data"
    }
    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
