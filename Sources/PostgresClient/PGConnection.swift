/// How long a connection waits for PostgreSQL.
public struct PGConnectionConfig: Sendable, Hashable {
    /// Bound on opening the connection (libpq `connect_timeout`, whole seconds, at least 2); nil:
    /// the connection string's own, else libpq's default (none).
    public var connectTimeoutSeconds: Int?
    /// Bound on each statement's answer; nil: wait as long as it takes. Past it the statement fails
    /// with `PGError.timedOut` and the connection is marked lost (a pool replaces it).
    public var queryTimeoutSeconds: Double?
    /// PostgreSQL ends this connection's backend (releasing its locks, advisory ones included) about
    /// this long after the network to this client went silent; nil: the server's defaults (TCP
    /// keepalive after 2 hours). A partition is silent both ways, so without this a backend of a
    /// client cut off mid-transaction keeps its row and advisory locks for hours after the client
    /// gave up on it. Set per session (`tcp_keepalives_*`, `tcp_user_timeout`); no effect over a
    /// Unix socket, where nothing can be partitioned.
    public var deadPeerSeconds: Int?

    public init(connectTimeoutSeconds: Int? = nil, queryTimeoutSeconds: Double? = nil, deadPeerSeconds: Int? = nil) {
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.queryTimeoutSeconds = queryTimeoutSeconds
        self.deadPeerSeconds = deadPeerSeconds
    }

    /// This config with `deadPeerSeconds` set.
    public func detectingDeadPeers(withinSeconds seconds: Int) -> PGConnectionConfig {
        var config = self
        config.deadPeerSeconds = max(3, seconds)
        return config
    }

    /// libpq's own behaviour: no bounds. Right for a writer thread that must wait out an outage.
    public static let `default` = PGConnectionConfig()
    /// For readers that answer people (HTTP routes, session starts, probes): a stopped server
    /// costs them seconds, never a hang.
    public static let interactive = PGConnectionConfig(connectTimeoutSeconds: 3, queryTimeoutSeconds: 15)
}

/// One libpq connection. Not thread-safe: use it from one thread at a time (the store writer
/// owns one on its own thread; readers check connections out of a pool).
///
/// The connection is closed (PQfinish) when the object is released.
public final class PGConnection {
    private let raw: LibPQ.Connection
    private var preparedNames: Set<String> = []
    public let config: PGConnectionConfig
    /// Set when a statement timed out: the connection's protocol state is unknown, so it counts as
    /// lost until `reset()`.
    private var abandoned = false

    /// Connects, then pins the session to UTC and ISO dates so `Date` decoding never depends on
    /// server defaults.
    public init(connectionString: String, config: PGConnectionConfig = .default) throws {
        self.config = config
        raw = try LibPQ.connect(connectionString, connectTimeoutSeconds: config.connectTimeoutSeconds)
        if config.queryTimeoutSeconds != nil {
            do { try LibPQ.setNonBlocking(raw) } catch {
                LibPQ.finish(raw)
                throw error
            }
        }
        try configureSession()
    }

    /// UTC and ISO dates, so `Date` decoding never depends on server defaults; dead-peer detection.
    private func configureSession() throws {
        try execute("SET TimeZone TO 'UTC'")
        try execute("SET DateStyle TO 'ISO, YMD'")
        if let seconds = config.deadPeerSeconds {
            // Probes after a third of the time idle, one a second, the rest of the third unanswered;
            // unacknowledged data gives up after the whole time.
            let third = max(1, seconds / 3)
            try execute("SET tcp_keepalives_idle = \(third)")
            try execute("SET tcp_keepalives_interval = 1")
            try execute("SET tcp_keepalives_count = \(third)")
            try execute("SET tcp_user_timeout = \(seconds * 1000)")
        }
    }

    deinit { LibPQ.finish(raw) }

    /// False once the server connection is lost (or a statement timed out); `reset()` reconnects.
    public var isConnected: Bool { !abandoned && LibPQ.isConnected(raw) }

    /// e.g. 150004 for 15.4.
    public var serverVersion: Int { LibPQ.serverVersion(raw) }

    /// Reconnects with the original parameters; prepared statements are forgotten.
    public func reset() throws {
        preparedNames.removeAll()
        abandoned = false
        try LibPQ.reset(raw)
        if config.queryTimeoutSeconds != nil { try LibPQ.setNonBlocking(raw) }
        try configureSession()
    }

    /// Subscribes this connection to `channel` (LISTEN). The name is an identifier, quoted here.
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(Self.quoteIdentifier(channel))")
    }

    /// The notifications for the channels this connection listens to: those already received, else
    /// the first that arrive within `timeoutSeconds` (an empty array when none did). Throws when the
    /// connection is lost, so a listener knows to reconnect and catch up on what it may have missed.
    public func notifications(timeoutSeconds: Double) throws -> [PGNotification] {
        let pending = LibPQ.takeNotifications(raw)
        guard pending.isEmpty else { return pending }
        guard try LibPQ.awaitInput(raw, timeoutSeconds: timeoutSeconds) else { return [] }
        return LibPQ.takeNotifications(raw)
    }

    /// Runs one statement with `$1...$n` bind parameters (PQexecParams; values never touch the SQL
    /// text). `nil` binds NULL.
    public func query(_ sql: String, _ params: [PGValue?] = []) throws -> PGResult {
        let texts = params.map { $0?.pgText }
        guard let timeout = config.queryTimeoutSeconds else {
            return PGResult(raw: try LibPQ.execParams(raw, sql, texts))
        }
        guard !abandoned else {
            throw PGError(code: .connectionFailed, message: "the connection was abandoned after a statement timed out")
        }
        do {
            return PGResult(raw: try LibPQ.execParams(raw, sql, texts, timeoutSeconds: timeout))
        } catch let error as PGError where error.code == .timedOut {
            abandoned = true
            throw error
        }
    }

    /// Runs a statement that returns no rows; returns the number of affected rows.
    @discardableResult
    public func execute(_ sql: String, _ params: [PGValue?] = []) throws -> Int {
        try query(sql, params).affectedRows
    }

    /// Runs a multi-statement SQL script (PQexec, simple protocol). For trusted SQL files such
    /// as migrations only: it takes no parameters, so never build its text from input.
    public func executeScript(_ sql: String) throws {
        LibPQ.clear(try LibPQ.exec(raw, sql))
    }

    /// Runs `COPY table (columns) FROM STDIN` with `data` in COPY text format (see `PGCopyText`);
    /// returns the rows copied. COPY carries values as data, never as SQL text.
    @discardableResult
    public func copyIn(_ sql: String, data: [UInt8]) throws -> Int {
        try LibPQ.copyIn(raw, sql, data: data)
    }

    /// Prepares `sql` under `name` once per connection (PQprepare); later calls are no-ops.
    public func prepareIfNeeded(name: String, sql: String, parameterCount: Int) throws {
        guard !preparedNames.contains(name) else { return }
        try LibPQ.prepare(raw, name: name, sql: sql, parameterCount: parameterCount)
        preparedNames.insert(name)
    }

    /// Runs a statement prepared with `prepareIfNeeded` (PQexecPrepared).
    public func queryPrepared(name: String, _ params: [PGValue?]) throws -> PGResult {
        PGResult(raw: try LibPQ.execPrepared(raw, name: name, params.map { $0?.pgText }))
    }

    @discardableResult
    public func executePrepared(name: String, _ params: [PGValue?]) throws -> Int {
        try queryPrepared(name: name, params).affectedRows
    }

    /// Runs `body` between BEGIN and COMMIT; any thrown error rolls back and is rethrown.
    @discardableResult
    public func transaction<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if isConnected { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `text` as a SQL string literal (libpq's PQescapeLiteral), for statements that cannot take
    /// bind parameters; everything else binds its values.
    public func quoteLiteral(_ text: String) throws -> String {
        try LibPQ.escapeLiteral(raw, text)
    }

    /// The SCRAM-SHA-256 verifier of `password` for `role` (libpq's PQencryptPasswordConn), for
    /// `ALTER ROLE … PASSWORD`: the server stores it as given and never sees the password.
    public func scramVerifier(password: String, role: String) throws -> String {
        try LibPQ.scramVerifier(raw, password: password, role: role)
    }

    /// `name` as a SQL identifier: double-quoted, inner double quotes doubled (what
    /// PostgreSQL's quote_ident does), so any role or database name is one identifier.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Quotes a value for a `key=value` libpq connection string (single quotes, with `\` and `'`
    /// backslash-escaped), so paths with spaces or quotes are safe.
    public static func quoteConnectionValue(_ value: String) -> String {
        var quoted = "'"
        for character in value {
            if character == "\\" || character == "'" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "'"
    }
}
