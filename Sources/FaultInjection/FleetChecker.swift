import Foundation
import PostgresClient

/// The fencing audit of a fleet run, from the tables migration 0010 made: `conversation_writes`
/// (every committed write, by conversation, epoch and server) and `lease_history` (every claim).
public struct FleetFencingAudit: Sendable {
    /// Both tables exist (the servers applied migration 0010).
    public var tablesPresent = false
    public var writeRows = 0
    public var historyRows = 0
    /// Claims of a conversation after its first (epoch > 1): takeovers the servers recorded.
    public var takeoverClaims = 0
    /// (conversation, epoch) written by more than one server (must be none).
    public var sharedEpochs: [String] = []
    /// Writes committed under an epoch after a later epoch of the same conversation was claimed
    /// (must be none).
    public var staleWrites: [String] = []

    /// Nothing to hold the servers to: the tables are missing or no write was recorded.
    public var isEmpty: Bool { !tablesPresent || writeRows == 0 }

    public var summary: String {
        guard tablesPresent else { return "fencing audit: tables missing (migration 0010 not applied)" }
        guard writeRows > 0 else {
            return "fencing audit: no rows (conversation_writes empty, lease_history \(historyRows) rows): the servers record no fenced writes, nothing to check"
        }
        return "\(writeRows) write rows, \(historyRows) claims (\(takeoverClaims) after the first); same epoch by two servers \(sharedEpochs.count), stale writes \(staleWrites.count)"
    }

    public var violations: Int { sharedEpochs.count + staleWrites.count }
}

/// Holds PostgreSQL to the fencing promise: no conversation written by two servers under one
/// epoch, nothing written under an epoch once a later one was claimed.
struct FleetChecker {
    let connectionString: String

    func audit() throws -> FleetFencingAudit {
        var audit = FleetFencingAudit()
        let connection = try PGConnection(connectionString: connectionString)
        let present = try connection.query("""
            SELECT to_regclass('conversation_writes') IS NOT NULL AND to_regclass('lease_history') IS NOT NULL AS present
            """)
        audit.tablesPresent = try present.rows.first?.decode(Bool.self, column: "present") ?? false
        guard audit.tablesPresent else { return audit }
        let counts = try connection.query("""
            SELECT (SELECT count(*) FROM conversation_writes)::bigint AS writes,
                   (SELECT count(*) FROM lease_history)::bigint AS claims,
                   (SELECT count(*) FROM lease_history WHERE epoch > 1)::bigint AS takeovers
            """).rows[0]
        audit.writeRows = Int(try counts.decode(Int64.self, column: "writes"))
        audit.historyRows = Int(try counts.decode(Int64.self, column: "claims"))
        audit.takeoverClaims = Int(try counts.decode(Int64.self, column: "takeovers"))
        for row in try connection.query("""
            SELECT conversation_id, epoch::bigint AS epoch, string_agg(DISTINCT server_instance::text, ',') AS servers
            FROM conversation_writes GROUP BY 1, 2 HAVING count(DISTINCT server_instance) > 1 ORDER BY 1, 2
            """).rows {
            audit.sharedEpochs.append("\(try row.decode(String.self, column: "conversation_id")) epoch \(try row.decode(Int64.self, column: "epoch")) "
                                      + "written by servers \(try row.decode(String.self, column: "servers"))")
        }
        for row in try connection.query("""
            SELECT w.conversation_id, w.epoch::bigint AS epoch, w.server_instance::bigint AS server,
                   h.epoch::bigint AS later_epoch, h.server_instance::bigint AS later_server,
                   EXTRACT(EPOCH FROM w.last_at - h.acquired_at)::float8 AS seconds_after
            FROM conversation_writes w
            JOIN lease_history h ON h.conversation_id = w.conversation_id AND h.epoch > w.epoch AND h.acquired_at < w.last_at
            ORDER BY 1, 2, 4
            """).rows {
            let after = try row.decode(Double.self, column: "seconds_after")
            audit.staleWrites.append("\(try row.decode(String.self, column: "conversation_id")): server \(try row.decode(Int64.self, column: "server")) "
                                     + "wrote under epoch \(try row.decode(Int64.self, column: "epoch")) "
                                     + String(format: "%.3f s after server %lld claimed epoch %lld", after,
                                              try row.decode(Int64.self, column: "later_server"), try row.decode(Int64.self, column: "later_epoch")))
        }
        return audit
    }

    /// A job's row: its status, the server it names, and whether that server's lease lock (0003:
    /// advisory lock 1397965635, instance) is held, i.e. whether recovery would consider it alive.
    func jobState(_ id: String) -> String? {
        guard let connection = try? PGConnection(connectionString: connectionString),
              let row = try? connection.query("""
                SELECT j.status, j.server_instance::bigint AS server, j.attempts::bigint AS attempts,
                       EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                               AND l.classid = 1397965635::int::oid AND l.objid = j.server_instance::oid) AS lock_held
                FROM jobs j WHERE j.id = $1
                """, [id]).rows.first else { return nil }
        let status = (try? row.decode(String.self, column: "status")) ?? "?"
        let server = (try? row.decode(Int64?.self, column: "server")) ?? nil
        let attempts = (try? row.decode(Int64.self, column: "attempts")) ?? 0
        let held = (try? row.decode(Bool.self, column: "lock_held")) ?? false
        return "row: \(status), server_instance \(server.map(String.init) ?? "none"), attempts \(attempts)"
            + (server == nil ? "" : held ? ", that instance's lease lock still held in PostgreSQL" : ", that instance's lease lock not held")
    }

    /// PostgreSQL backends waiting on a lock now, by what they run (after the run: something stuck).
    func lockWaits() -> [String] {
        guard let connection = try? PGConnection(connectionString: connectionString),
              let rows = try? connection.query("""
                SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS query, count(*)::bigint AS backends,
                       max(EXTRACT(EPOCH FROM now() - query_start))::float8 AS longest
                FROM pg_stat_activity WHERE wait_event_type = 'Lock' GROUP BY 1 ORDER BY 2 DESC
                """).rows else { return [] }
        return rows.compactMap { row in
            guard let query = try? row.decode(String.self, column: "query"), let count = try? row.decode(Int64.self, column: "backends"),
                  let longest = try? row.decode(Double.self, column: "longest") else { return nil }
            return "\(count) backend(s) waiting on a lock, the longest \(Int(longest)) s: \(query)"
        }
    }
}

/// One fault as the fleet harness injected it.
public struct FleetInjection: Sendable {
    public var fault: FleetFault
    /// The server's name (a, b, c) or the device's.
    public var target: String
    /// Seconds from the run's start.
    public var atSeconds: Double
    public var holdSeconds: Double
    /// SpeakerSyncKit devices whose connection HAProxy had on the server at the moment of the
    /// fault, with the conversation each was streaming.
    public var affected: [(device: String, conversationID: String)] = []
    public var devicesOnServer: [String] { affected.map(\.device) }
    public var note = ""
}

/// What a fleet run found: the single-server harness's word checks, the fencing audit, the jobs,
/// and how long devices took to stream again elsewhere after their server failed.
public struct FleetReport: Sendable {
    /// The word, session and job figures (FaultChecker's checks), as the single-server harness has them.
    public var words = FaultReport()
    public var faultsInjected: [FleetFault: Int] = [:]
    public var injections: [FleetInjection] = []
    /// How the servers' lease was set ("--lease-seconds 6", or why not).
    public var lease = ""
    public var fencing = FleetFencingAudit()
    public var takeovers: [FleetTakeover] = []
    /// Jobs that finished `failed` (they did not vanish, but say so).
    public var failedJobs: [String] = []
    /// Servers that did not come back (a restart or a resume that failed): the run could not go on as planned.
    public var serverFailures: [String] = []
    /// Device partitions: the device's connection survived it / dropped and resumed.
    public var devicePartitionsSurvived = 0
    public var devicePartitionsReconnected = 0
    /// PostgreSQL backends still waiting on a lock once the run settled (diagnostics, not a check).
    public var lockWaits: [String] = []
    public var serverPeakResidentBytes: [String: Int] = [:]
    public var serverResidentBoundBytes = 0
    public var seconds = 0.0

    public var moved: [Double] { takeovers.compactMap { if case .moved(let seconds) = $0.outcome { seconds } else { nil } } }
    public var notMoved: [FleetTakeover] { takeovers.filter { if case .notMoved = $0.outcome { true } else { false } } }

    var wordsPassed: Bool {
        words.wordsLost.isEmpty && words.duplicates.isEmpty && words.lostAfterFinalizedClose.isEmpty && words.activeConversations.isEmpty
            && words.kitFailures.isEmpty && words.vanishedJobs.isEmpty
    }

    /// Every promise held that could be checked.
    public var passed: Bool {
        wordsPassed && fencing.violations == 0 && notMoved.isEmpty && serverFailures.isEmpty
            && serverPeakResidentBytes.values.allSatisfy { $0 <= serverResidentBoundBytes }
    }

    /// Passed, but the fencing audit had nothing to look at: not a pass.
    public var inconclusive: Bool { passed && fencing.isEmpty }

    public var totalFaults: Int { faultsInjected.values.reduce(0, +) }

    public var table: String {
        func mib(_ bytes: Int) -> String { String(format: "%.0f MiB", Double(bytes) / 1_048_576) }
        func figure(_ values: [Double]) -> String {
            guard let p50 = percentile(values, 50), let p99 = percentile(values, 99) else { return "none measured" }
            return String(format: "p50 %.1f s, p99 %.1f s (n = %d, min %.1f s, max %.1f s)", p50, p99, values.count, values.min()!, values.max()!)
        }
        var rows: [(String, String)] = [
            ("servers", "3 (a, b, c) on one PostgreSQL behind HAProxy, each in its own network namespace; \(lease)"),
            ("faults injected", "\(totalFaults) (" + FleetFault.allCases.compactMap { fault in faultsInjected[fault].map { "\(fault.rawValue) \($0)" } }
                .joined(separator: ", ") + ")"),
            ("sessions", "\(words.sessions) (\(words.kitSessions) SpeakerSyncKit meetings, \(words.rawSessions) raw started, \(words.rawFinalized) of them finalized; \(words.rawRefused) raw starts refused or unreachable)"),
            ("conversations", "\(words.conversations)"),
            ("words acknowledged", "\(words.wordsAcknowledged)"),
            ("words lost (must be 0)", "\(words.wordsLost.count)"),
            ("duplicates (must be 0)", "\(words.duplicates.count)"),
            ("unstored after a 1000 close (must be 0)", "\(words.lostAfterFinalizedClose.count)"),
            ("conversations left active (must be 0)", "\(words.activeConversations.count)"),
            ("kit devices not finalized with all words (must be 0)", "\(words.kitFailures.count)"),
            ("jobs queued / vanished (must be 0)", "\(words.jobs) / \(words.vanishedJobs.count)" + (failedJobs.isEmpty ? "" : " (\(failedJobs.count) failed)")),
            ("fencing: same epoch by two servers (must be 0)", fencing.isEmpty ? "-" : "\(fencing.sharedEpochs.count)"),
            ("fencing: stale writes (must be 0)", fencing.isEmpty ? "-" : "\(fencing.staleWrites.count)"),
            ("fencing audit", fencing.summary),
            ("takeover, all server faults", figure(moved)),
        ]
        for fault in FleetFault.allCases where fault.movesDevices {
            let values = takeovers.filter { $0.fault == fault }.compactMap { if case .moved(let s) = $0.outcome { s } else { nil } }
            rows.append(("  after \(fault.rawValue)", figure(values)))
        }
        let finishedFirst = takeovers.filter { $0.outcome == .finishedFirst }.count
        rows += [
            ("devices not moved off a failed server (must be 0)", "\(notMoved.count) of \(takeovers.count) on a failed server" + (finishedFirst > 0 ? " (\(finishedFirst) finished their meeting first)" : "")),
            ("device partitions: survived / reconnected", "\(devicePartitionsSurvived) / \(devicePartitionsReconnected)"),
            ("servers that did not come back (must be 0)", "\(serverFailures.count)"),
            ("server RSS peak (bound)", serverPeakResidentBytes.sorted { $0.key < $1.key }.map { "\($0.key) \(mib($0.value))" }.joined(separator: ", ")
                + " (\(mib(serverResidentBoundBytes)))"),
            ("wall time", String(format: "%.0f s", seconds)),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        rows.append(("result", !passed ? "FAIL" : inconclusive ? "INCONCLUSIVE (every check passed, but \(fencing.summary))" : "PASS"))
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// The faults as injected, one a line.
    public var timeline: String {
        injections.map { injection in
            String(format: "%6.1f s  ", injection.atSeconds) + "\(injection.fault.rawValue) \(injection.target)"
                + String(format: " for %.0f s", injection.holdSeconds)
                + (injection.fault.movesDevices ? " (kit devices on it: \(injection.devicesOnServer.isEmpty ? "none" : injection.devicesOnServer.joined(separator: ", ")))" : "")
                + (injection.note.isEmpty ? "" : "; \(injection.note)")
        }.joined(separator: "\n")
    }

    /// The first few of every list that must be empty.
    public var problems: String {
        var lines: [String] = []
        let notMovedLines = notMoved.map { takeover -> String in
            guard case .notMoved(let why) = takeover.outcome else { return "" }
            return "\(takeover.device) (\(takeover.conversationID)) after \(takeover.fault.rawValue) of \(takeover.server): \(why)"
        }
        for (name, list) in [("lost", words.wordsLost), ("duplicate", words.duplicates), ("unstored after 1000", words.lostAfterFinalizedClose),
                             ("active", words.activeConversations), ("kit", words.kitFailures), ("vanished job", words.vanishedJobs),
                             ("failed job", failedJobs), ("same epoch by two servers", fencing.sharedEpochs), ("stale write", fencing.staleWrites),
                             ("not moved", notMovedLines), ("server", serverFailures), ("PostgreSQL (diagnostic)", lockWaits)] where !list.isEmpty {
            lines.append("\(name) (\(list.count)): " + list.prefix(8).joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }
}
