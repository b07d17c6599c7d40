/// A store failure with a stable code; the underlying PostgreSQL error, when there is one, is in
/// `message` (for the log: it may quote SQL or paths, so it is never sent to a client as it is).
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case invalidMigration = "invalid_migration"
        case writeFailed = "write_failed"
        case shutDown = "shut_down"
        case invalidCursor = "invalid_cursor"
        /// A stored value could not be read back (names the column).
        case invalidData = "invalid_data"
        /// PostgreSQL refused a step for its content (a data exception or an integrity violation):
        /// retrying cannot help. `refusedTarget` says what was refused.
        case rejected = "rejected"
        /// The step's fencing epoch is no longer its conversation's: another session (on this server
        /// or another) claimed the conversation since. Nothing of the step was written, and retrying
        /// cannot help: the step's session no longer owns the conversation.
        case fenced = "fenced"
    }
    public var code: Code
    public var message: String
    /// For `rejected`: the table and column PostgreSQL named (`words (column text)`), when it named them.
    public var refusedTarget: String?

    public init(code: Code, message: String, refusedTarget: String? = nil) {
        self.code = code
        self.message = message
        self.refusedTarget = refusedTarget
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
