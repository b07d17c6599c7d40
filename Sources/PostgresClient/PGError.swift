/// An error from PostgreSQL or from this wrapper, with a stable `code` callers can switch on
/// (the message text of libpq/the server is for humans and changes between versions).
public struct PGError: Error, Sendable, CustomStringConvertible {
    /// Stable, machine-readable error category.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The connection could not be opened, or was lost.
        public static let connectionFailed = Code(rawValue: "connection_failed")
        /// The server rejected a statement (see `sqlState`).
        public static let queryFailed = Code(rawValue: "query_failed")
        /// A result column could not be decoded into the requested Swift type (see `column`).
        public static let decodeFailed = Code(rawValue: "decode_failed")
        /// A Swift value cannot be sent as a parameter (e.g. a string containing NUL).
        public static let encodeFailed = Code(rawValue: "encode_failed")
        /// The embedded cluster could not be created, started or stopped.
        public static let clusterFailed = Code(rawValue: "cluster_failed")
        /// The system user that runs the embedded cluster as root is missing and could not be
        /// created (`useradd` failed, or is not installed).
        public static let clusterAccountUnavailable = Code(rawValue: "cluster_account_unavailable")
        /// The server did not answer within the connection's query deadline (a stopped or hung
        /// server); the connection was closed, since its protocol state is unknown.
        public static let timedOut = Code(rawValue: "timed_out")
        /// No pooled connection became free within the pool's wait.
        public static let poolExhausted = Code(rawValue: "pool_exhausted")
    }

    public var code: Code
    /// Five-character SQLSTATE from the server, when the server reported the error.
    public var sqlState: String?
    public var message: String
    /// For `decode_failed`: the column that could not be decoded. For a server error: the column
    /// the server named in its diagnostics (a NOT NULL or type violation), when it named one.
    public var column: String?
    /// The table and constraint the server named in its diagnostics, when it named them: what a
    /// rejected write was refused for, without parsing the message text.
    public var table: String?
    public var constraint: String?

    public init(code: Code, message: String, sqlState: String? = nil, column: String? = nil,
                table: String? = nil, constraint: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.column = column
        self.table = table
        self.constraint = constraint
    }

    /// True when retrying on a fresh connection may succeed (connection loss, serialization
    /// failure, deadlock, server shutting down or out of resources).
    public var isTransient: Bool {
        if code == .connectionFailed || code == .timedOut || code == .poolExhausted { return true }
        guard let sqlState else { return false }
        let sqlClass = sqlState.prefix(2)
        return ["08", "40", "53", "57", "58"].contains(String(sqlClass))
    }

    public var description: String {
        var text = "PGError(\(code)"
        if let sqlState { text += ", sqlstate \(sqlState)" }
        if let table { text += ", table \"\(table)\"" }
        if let column { text += ", column \"\(column)\"" }
        if let constraint { text += ", constraint \"\(constraint)\"" }
        return text + "): \(message)"
    }
}
