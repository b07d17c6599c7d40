import Foundation
import PostgresClient

/// What a fault run found, held against the promises: every word a device saw `stored: true` is in
/// PostgreSQL exactly once with the text it sent; no connection closed 1000 with anything unstored;
/// no conversation is left active; every SpeakerSyncKit device finalized with everything stored; no
/// job vanished; the server's memory stayed within its bound.
public struct FaultReport: Sendable {
    public var faultsInjected: [Fault: Int] = [:]
    public var sessions = 0
    public var conversations = 0
    public var wordsAcknowledged = 0
    /// Acknowledged words PostgreSQL does not have (must be 0).
    public var wordsLost: [String] = []
    /// Words PostgreSQL holds more than once (must be 0).
    public var duplicates: [String] = []
    /// Words of connections closed 1000 after finalize that PostgreSQL does not have (must be 0).
    public var lostAfterFinalizedClose: [String] = []
    /// Conversations still `active` after recovery (must be 0).
    public var activeConversations: [String] = []
    /// Kit devices that did not finalize, or finalized with words missing (must be 0).
    public var kitFailures: [String] = []
    public var kitSessions = 0
    public var rawSessions = 0
    public var rawFinalized = 0
    /// Raw connections that never got a session (the server down, restarting or refusing the start).
    public var rawRefused = 0
    /// Jobs answered 202 that later answered 404 or never finished (must be 0).
    public var vanishedJobs: [String] = []
    public var jobs = 0
    /// `invalid_text` refusals the hostile devices got (each a whole words message, none acknowledged).
    public var hostileWordsRefused = 0
    public var serverPeakResidentBytes = 0
    public var serverResidentBoundBytes = 0
    public var seconds = 0.0

    public var passed: Bool {
        wordsLost.isEmpty && duplicates.isEmpty && lostAfterFinalizedClose.isEmpty && activeConversations.isEmpty
            && kitFailures.isEmpty && vanishedJobs.isEmpty && serverPeakResidentBytes <= serverResidentBoundBytes
    }

    public var totalFaults: Int { faultsInjected.values.reduce(0, +) }

    /// The table the harness prints.
    public var table: String {
        func mib(_ bytes: Int) -> String { String(format: "%.0f MiB", Double(bytes) / 1_048_576) }
        var rows: [(String, String)] = [
            ("faults injected", "\(totalFaults) (" + Fault.allCases.compactMap { fault in faultsInjected[fault].map { "\(fault.rawValue) \($0)" } }.joined(separator: ", ") + ")"),
            ("sessions", "\(sessions) (\(kitSessions) SpeakerSyncKit meetings, \(rawSessions) raw started, \(rawFinalized) of them finalized; \(rawRefused) raw starts refused or unreachable)"),
            ("conversations", "\(conversations)"),
            ("words acknowledged", "\(wordsAcknowledged)"),
            ("words lost (must be 0)", "\(wordsLost.count)"),
            ("duplicates (must be 0)", "\(duplicates.count)"),
            ("unstored after a 1000 close (must be 0)", "\(lostAfterFinalizedClose.count)"),
            ("conversations left active (must be 0)", "\(activeConversations.count)"),
            ("kit devices not finalized with all words (must be 0)", "\(kitFailures.count)"),
            ("jobs queued / vanished (must be 0)", "\(jobs) / \(vanishedJobs.count)"),
            ("hostile messages refused (invalid_text)", "\(hostileWordsRefused)"),
            ("server RSS peak (bound)", "\(mib(serverPeakResidentBytes)) (\(mib(serverResidentBoundBytes)))"),
            ("wall time", String(format: "%.0f s", seconds)),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        rows.append(("result", passed ? "PASS" : "FAIL"))
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// The first few of every list that must be empty, for a failing run's log.
    public var problems: String {
        var lines: [String] = []
        for (name, list) in [("lost", wordsLost), ("duplicate", duplicates), ("unstored after 1000", lostAfterFinalizedClose),
                             ("active", activeConversations), ("kit", kitFailures), ("vanished job", vanishedJobs)] where !list.isEmpty {
            lines.append("\(name): " + list.prefix(8).joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }
}

/// Holds PostgreSQL to the ledger once the run has settled.
struct FaultChecker {
    let databaseURL: String

    func check(_ ledger: AcknowledgementLedger, into report: inout FaultReport) throws {
        let conversations = ledger.conversations
        let connection = try PGConnection(connectionString: databaseURL)
        report.conversations = conversations.count
        let ids = Array(conversations.keys)
        var stored: [String: [AcknowledgementLedger.WordKey: Int]] = [:]
        for row in try connection.query("SELECT conversation_id, text, start_seconds FROM words WHERE conversation_id = ANY($1::text[])", [ids]).rows {
            let id = try row.decode(String.self, column: "conversation_id")
            let key = AcknowledgementLedger.WordKey(text: try row.decode(String.self, column: "text"),
                                                    startSeconds: try row.decode(Double.self, column: "start_seconds"))
            stored[id, default: [:]][key, default: 0] += 1
        }
        for (id, conversation) in conversations.sorted(by: { $0.key < $1.key }) {
            let words = stored[id] ?? [:]
            report.wordsAcknowledged += conversation.acknowledged.count
            for word in conversation.acknowledged where words[word] == nil { report.wordsLost.append("\(id): \(word)") }
            for (word, count) in words where count > 1 { report.duplicates.append("\(id): \(word) ×\(count)") }
            for word in conversation.sentBeforeFinalizedClose where words[word] == nil {
                report.lostAfterFinalizedClose.append("\(id): \(word)")
            }
            if conversation.kitDevice {
                let missing = conversation.sent.filter { words[$0] == nil }
                if !conversation.finalized || !missing.isEmpty {
                    report.kitFailures.append("\(id): finalized \(conversation.finalized), \(missing.count) of \(conversation.sent.count) words missing")
                }
            }
        }
        for row in try connection.query("SELECT id FROM conversations WHERE status = 'active' AND id = ANY($1::text[])", [ids]).rows {
            report.activeConversations.append(try row.decode(String.self, column: "id"))
        }
    }
}
