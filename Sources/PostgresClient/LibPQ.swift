import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

/// The one file of raw libpq calls. Everything else in the package goes through these helpers,
/// which turn libpq's status codes and NULL returns into thrown `PGError`s (the way swift-nio's
/// System.swift wraps syscalls), so ownership and error handling live in one place.
enum LibPQ {
    typealias Connection = OpaquePointer
    typealias Result = OpaquePointer

    // MARK: Connections

    /// Opens a connection. On failure the half-open handle is freed here (PQfinish is required
    /// even when PQconnectdb fails) and the error carries libpq's message.
    /// `connectTimeoutSeconds` (libpq's `connect_timeout`, whole seconds, at least 2) bounds the
    /// connection's startup, including a server that accepts the socket but never answers (one
    /// that is SIGSTOPped). It overrides a `connect_timeout` in the connection string.
    static func connect(_ connectionString: String, connectTimeoutSeconds: Int? = nil) throws -> Connection {
        var keywords = ["dbname"]
        var values = [connectionString]
        if let connectTimeoutSeconds {
            keywords.append("connect_timeout")
            values.append(String(max(2, connectTimeoutSeconds)))
        }
        // expand_dbname = 1: the first "dbname" is read as a whole connection string or URI, and the
        // keywords after it override what it says.
        let opened = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection = opened else {
            throw PGError(code: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = errorMessage(connection)
            PQfinish(connection)
            throw PGError(code: .connectionFailed, message: message)
        }
        // libpq's default prints every NOTICE to stderr ("relation schema_migrations already exists, skipping"
        // at each start): noise, and it breaks `serve --log-format json`'s one object per line. Errors
        // still arrive as results; nothing the server acts on comes as a notice.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        return connection
    }

    static func finish(_ connection: Connection) { PQfinish(connection) }

    /// Non-blocking mode, so sending a statement never blocks (the deadline path waits with poll).
    static func setNonBlocking(_ connection: Connection) throws {
        guard PQsetnonblocking(connection, 1) == 0 else {
            throw PGError(code: .connectionFailed, message: errorMessage(connection))
        }
    }

    private static func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    static func isConnected(_ connection: Connection) -> Bool { PQstatus(connection) == CONNECTION_OK }

    /// Reconnects using the same parameters.
    static func reset(_ connection: Connection) throws {
        PQreset(connection)
        guard PQstatus(connection) == CONNECTION_OK else {
            throw PGError(code: .connectionFailed, message: errorMessage(connection))
        }
    }

    static func serverVersion(_ connection: Connection) -> Int { Int(PQserverVersion(connection)) }

    static func errorMessage(_ connection: Connection) -> String {
        guard let text = PQerrorMessage(connection) else { return "unknown libpq error" }
        return String(cString: text).trimmingTrailingNewlines()
    }

    // MARK: Statements

    /// PQexecParams with text-format parameters and text-format results.
    static func execParams(_ connection: Connection, _ sql: String, _ params: [String?]) throws -> Result {
        let result = try withCParameters(params) { values in
            sql.withCString { sqlText in
                PQexecParams(connection, sqlText, Int32(params.count), nil, values, nil, nil, 0)
            }
        }
        return try checked(result, connection)
    }

    /// The same as `execParams`, but the wait for the answer is bounded: the statement is sent
    /// with PQsendQueryParams and the socket polled until `timeoutSeconds` have passed, then
    /// `PGError.timedOut` is thrown and the connection must not be used again (its protocol state
    /// is unknown). libpq's blocking calls would wait for ever on a server that is stopped.
    static func execParams(_ connection: Connection, _ sql: String, _ params: [String?], timeoutSeconds: Double) throws -> Result {
        let deadline = monotonicSeconds() + timeoutSeconds
        let sent = try withCParameters(params) { values in
            sql.withCString { sqlText in
                PQsendQueryParams(connection, sqlText, Int32(params.count), nil, values, nil, nil, 0)
            }
        }
        guard sent == 1 else {
            throw PGError(code: isConnected(connection) ? .queryFailed : .connectionFailed, message: errorMessage(connection))
        }
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { break }
            guard flushed == 1 else { throw PGError(code: .connectionFailed, message: errorMessage(connection)) }
            try wait(connection, events: Int16(POLLOUT), deadline: deadline)
        }
        var last: Result?
        var failure: PGError?
        while true {
            while PQisBusy(connection) == 1 {
                try wait(connection, events: Int16(POLLIN), deadline: deadline)
                guard PQconsumeInput(connection) == 1 else {
                    if let last { clear(last) }
                    throw PGError(code: .connectionFailed, message: errorMessage(connection))
                }
            }
            guard let result = PQgetResult(connection) else { break }
            do {
                let ok = try checked(result, connection)
                if let last { clear(last) }
                last = ok
            } catch let error as PGError {
                failure = failure ?? error
            }
        }
        if let failure {
            if let last { clear(last) }
            throw failure
        }
        guard let last else { throw PGError(code: .queryFailed, message: "the server sent no result") }
        return last
    }

    /// Waits for the connection's socket to become readable or writable, until `deadline`.
    private static func wait(_ connection: Connection, events: Int16, deadline: Double) throws {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PGError(code: .connectionFailed, message: errorMessage(connection)) }
        while true {
            let remaining = deadline - monotonicSeconds()
            guard remaining > 0 else {
                throw PGError(code: .timedOut, message: "PostgreSQL did not answer within the query deadline")
            }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up)))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw PGError(code: .connectionFailed, message: "poll failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    // MARK: Notifications (LISTEN/NOTIFY)

    /// The notifications libpq has already read, in arrival order; each PGnotify is freed here.
    static func takeNotifications(_ connection: Connection) -> [PGNotification] {
        var taken: [PGNotification] = []
        while let notify = PQnotifies(connection) {
            taken.append(PGNotification(
                channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra),
                senderProcessID: Int(notify.pointee.be_pid)))
            PQfreemem(notify)
        }
        return taken
    }

    /// Waits until the socket is readable or `timeoutSeconds` pass, then reads what arrived into libpq
    /// (PQconsumeInput). False: the time passed with nothing to read. Throws when the connection is lost.
    static func awaitInput(_ connection: Connection, timeoutSeconds: Double) throws -> Bool {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PGError(code: .connectionFailed, message: errorMessage(connection)) }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(min(max(0, timeoutSeconds) * 1000, Double(Int32.max)).rounded(.up)))
        if ready < 0 {
            if errno == EINTR { return false }
            throw PGError(code: .connectionFailed, message: "poll failed: \(String(cString: strerror(errno)))")
        }
        guard ready > 0 else { return false }
        guard PQconsumeInput(connection) == 1 else {
            throw PGError(code: .connectionFailed, message: errorMessage(connection))
        }
        return true
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }

    /// PQexec: the simple protocol, which accepts several statements but no parameters.
    static func exec(_ connection: Connection, _ sql: String) throws -> Result {
        let result = sql.withCString { PQexec(connection, $0) }
        return try checked(result, connection)
    }

    /// COPY … FROM STDIN: starts the copy, sends `data` (COPY text format) in chunks, ends it and
    /// collects the command's result. Returns the number of rows copied.
    static func copyIn(_ connection: Connection, _ sql: String, data: [UInt8]) throws -> Int {
        guard let start = sql.withCString({ PQexec(connection, $0) }) else {
            throw PGError(code: isConnected(connection) ? .queryFailed : .connectionFailed, message: errorMessage(connection))
        }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            clear(try checked(start, connection))
            throw PGError(code: .queryFailed, message: "COPY did not enter copy-in mode")
        }
        PQclear(start)
        var offset = 0
        let chunkSize = 1 << 20
        while offset < data.count {
            let count = min(chunkSize, data.count - offset)
            let sent = data.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: count) {
                    PQputCopyData(connection, $0, Int32(count))
                }
            }
            guard sent == 1 else {
                throw PGError(code: isConnected(connection) ? .queryFailed : .connectionFailed, message: errorMessage(connection))
            }
            offset += count
        }
        guard PQputCopyEnd(connection, nil) == 1 else {
            throw PGError(code: isConnected(connection) ? .queryFailed : .connectionFailed, message: errorMessage(connection))
        }
        var rows = 0
        var failure: PGError?
        while let result = PQgetResult(connection) {
            do {
                let ok = try checked(result, connection)
                rows = affectedRows(ok)
                clear(ok)
            } catch let error as PGError {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return rows
    }

    static func prepare(_ connection: Connection, name: String, sql: String, parameterCount: Int) throws {
        let result = name.withCString { nameText in
            sql.withCString { sqlText in PQprepare(connection, nameText, sqlText, Int32(parameterCount), nil) }
        }
        clear(try checked(result, connection))
    }

    static func execPrepared(_ connection: Connection, name: String, _ params: [String?]) throws -> Result {
        let result = try withCParameters(params) { values in
            name.withCString { nameText in
                PQexecPrepared(connection, nameText, Int32(params.count), values, nil, nil, 0)
            }
        }
        return try checked(result, connection)
    }

    /// Converts a result into a thrown error unless it reports success; frees failed results.
    private static func checked(_ result: Result?, _ connection: Connection) throws -> Result {
        guard let result else {
            let code: PGError.Code = isConnected(connection) ? .queryFailed : .connectionFailed
            throw PGError(code: code, message: errorMessage(connection))
        }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return result
        }
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        // PG_DIAG_SQLSTATE 'C', PG_DIAG_TABLE_NAME 't', PG_DIAG_COLUMN_NAME 'c', PG_DIAG_CONSTRAINT_NAME 'n'.
        let sqlState = field("C")
        let (table, column, constraint) = (field("t"), field("c"), field("n"))
        var message = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
        if message.isEmpty { message = errorMessage(connection) }
        PQclear(result)
        let code: PGError.Code = isConnected(connection) ? .queryFailed : .connectionFailed
        throw PGError(code: code, message: message.trimmingTrailingNewlines(), sqlState: sqlState,
                      column: column, table: table, constraint: constraint)
    }

    /// Lays all parameters out in one NUL-separated buffer and passes libpq an array of pointers
    /// into it, valid only for the duration of `body`.
    private static func withCParameters<R>(
        _ params: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> R
    ) throws -> R {
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        offsets.reserveCapacity(params.count)
        for (position, param) in params.enumerated() {
            guard let param else { offsets.append(nil); continue }
            let start = buffer.count
            offsets.append(start)
            // Whole, then checked: appending byte by byte was a visible share of a large step's encoding.
            buffer.append(contentsOf: param.utf8)
            if buffer[start...].contains(0) {
                throw PGError(
                    code: .encodeFailed,
                    message: "parameter $\(position + 1) contains a NUL byte, which PostgreSQL text cannot hold")
            }
            buffer.append(0)
        }
        if buffer.isEmpty { buffer.append(0) }
        return try buffer.withUnsafeBufferPointer { storage in
            // UTF-8 bytes read as C chars: same size and layout, only the signedness differs.
            let base = UnsafeRawPointer(storage.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { base + $0 } }
            return try pointers.withUnsafeBufferPointer { try body($0.baseAddress) }
        }
    }

    // MARK: Quoting and passwords

    /// PQescapeLiteral: `text` as a SQL string literal, for the few statements that take no bind
    /// parameters (utility statements such as ALTER ROLE … PASSWORD).
    static func escapeLiteral(_ connection: Connection, _ text: String) throws -> String {
        let length = text.utf8.count
        guard let escaped = text.withCString({ PQescapeLiteral(connection, $0, length) }) else {
            throw PGError(code: .encodeFailed, message: errorMessage(connection))
        }
        defer { PQfreemem(escaped) }
        return String(cString: escaped)
    }

    /// PQencryptPasswordConn: the SCRAM-SHA-256 verifier of `password` for `role`, computed here, so
    /// the password itself never reaches the server (nor its logs) in clear.
    static func scramVerifier(_ connection: Connection, password: String, role: String) throws -> String {
        guard let verifier = PQencryptPasswordConn(connection, password, role, "scram-sha-256") else {
            throw PGError(code: .encodeFailed, message: errorMessage(connection))
        }
        defer { PQfreemem(verifier) }
        return String(cString: verifier)
    }

    // MARK: Results

    static func clear(_ result: Result) { PQclear(result) }
    static func rowCount(_ result: Result) -> Int { Int(PQntuples(result)) }
    static func columnCount(_ result: Result) -> Int { Int(PQnfields(result)) }
    static func columnName(_ result: Result, _ column: Int) -> String {
        PQfname(result, Int32(column)).map { String(cString: $0) } ?? ""
    }
    static func isNull(_ result: Result, row: Int, column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }
    static func value(_ result: Result, row: Int, column: Int) -> String? {
        if isNull(result, row: row, column: column) { return nil }
        return PQgetvalue(result, Int32(row), Int32(column)).map { String(cString: $0) }
    }
    static func affectedRows(_ result: Result) -> Int {
        guard let text = PQcmdTuples(result) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
