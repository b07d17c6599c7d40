import Foundation
import Logging
import PostgresClient
import TranscriptMerge

/// A conversation row as stored.
public struct ConversationRecord: Sendable {
    public var state: ConversationState
    public var startedAt: Date
    public var endedAt: Date?
    /// `started_at` exactly as PostgreSQL prints it, for keyset paging without rounding.
    public var startedAtText: String
}

/// Reads for HTTP routes and for resuming sessions, over a small pool of connections whose
/// statements have deadlines (`PGConnectionConfig.interactive`): a stopped or hung PostgreSQL costs
/// a caller seconds and a `PGError`, never a hang, and callers on many threads do not queue behind
/// one connection. Lost connections are replaced.
public final class ConversationRepository: Sendable {
    public let pool: PGConnectionPool
    private let logger: Logger

    /// `primed`: opens one connection at once, so a server that cannot reach PostgreSQL fails at
    /// start; otherwise connections open on first need.
    public init(connectionString: String, poolSize: Int = 4, connectionConfig: PGConnectionConfig = .interactive,
                primed: Bool = true, logger: Logger) throws {
        self.logger = logger
        self.pool = PGConnectionPool(connectionString: connectionString, size: poolSize, connectionConfig: connectionConfig)
        if primed { try pool.prime() }
    }

    /// Runs `body` with a pooled connection, reconnecting once if the connection was lost.
    public func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try pool.withConnection(body)
    }

    private static let conversationColumns = """
        id, device_id, provider, sample_rate, encoding, language, options::text AS options, status, audio_seconds,
        status_reason, server_instance, started_at, ended_at, started_at::text AS started_at_text
        """

    public func conversation(id: String) throws -> ConversationRecord? {
        try withConnection { connection in
            try connection.query("SELECT \(Self.conversationColumns) FROM conversations WHERE id = $1", [id])
                .rows.first.map(Self.conversation)
        }
    }

    /// Newest first; `before` is the (started_at text, id) of the last row of the previous page.
    public func listConversations(deviceID: String?, limit: Int, before: (startedAt: String, id: String)?) throws -> [ConversationRecord] {
        try withConnection { connection in
            try connection.query("""
                SELECT \(Self.conversationColumns) FROM conversations
                WHERE ($1::text IS NULL OR device_id = $1)
                  AND ($2::timestamptz IS NULL OR (started_at, id) < ($2::timestamptz, $3::text))
                ORDER BY started_at DESC, id DESC
                LIMIT $4
                """, [deviceID, before?.startedAt, before?.id, limit]).rows.map(Self.conversation)
        }
    }

    /// Word counts per conversation, all and those without a speaker, in one query for a page.
    public func wordCounts(conversationIDs: [String]) throws -> [String: (total: Int, unlabelled: Int)] {
        try withConnection { connection in
            var counts: [String: (Int, Int)] = [:]
            for row in try connection.query("""
                SELECT conversation_id, count(*) AS total, count(*) FILTER (WHERE speaker IS NULL) AS unlabelled
                FROM words WHERE conversation_id = ANY($1::text[]) GROUP BY conversation_id
                """, [conversationIDs]).rows {
                counts[try row.decode(String.self, column: "conversation_id")] =
                    (try row.decode(Int.self, column: "total"), try row.decode(Int.self, column: "unlabelled"))
            }
            return counts
        }
    }

    /// All words in the merger's order (start, end, result, index).
    public func words(conversationID: String) throws -> [LabelledWord] {
        try withConnection { connection in
            try connection.query("""
                SELECT result_id, word_index, text, start_seconds, end_seconds, confidence, is_final, speaker,
                       speaker_confidence, utterance_id
                FROM words WHERE conversation_id = $1
                ORDER BY start_seconds, end_seconds, result_id COLLATE "C", word_index
                """, [conversationID]).rows.map { row in
                LabelledWord(
                    id: WordID(resultID: try row.decode(String.self, column: "result_id"), index: try row.decode(Int.self, column: "word_index")),
                    text: try row.decode(String.self, column: "text"),
                    startSeconds: try row.decode(Double.self, column: "start_seconds"),
                    endSeconds: try row.decode(Double.self, column: "end_seconds"),
                    confidence: try row.decode(Double?.self, column: "confidence"),
                    isFinal: try row.decode(Bool.self, column: "is_final"),
                    speaker: try row.decode(String?.self, column: "speaker"),
                    speakerConfidence: try row.decode(Double?.self, column: "speaker_confidence"),
                    utteranceID: UtteranceID(rawValue: UInt64(bitPattern: try row.decode(Int64.self, column: "utterance_id")))
                )
            }
        }
    }

    public func turns(conversationID: String) throws -> [(provider: String, turn: SpeakerTurn)] {
        try withConnection { connection in
            try connection.query("""
                SELECT turn_id, provider, speaker, start_seconds, end_seconds, confidence
                FROM speaker_turns WHERE conversation_id = $1 ORDER BY start_seconds, turn_id
                """, [conversationID]).rows.map { row in
                (try row.decode(String.self, column: "provider"), SpeakerTurn(
                    id: try row.decode(String.self, column: "turn_id"),
                    speaker: try row.decode(String.self, column: "speaker"),
                    startSeconds: try row.decode(Double.self, column: "start_seconds"),
                    endSeconds: try row.decode(Double.self, column: "end_seconds"),
                    confidence: try row.decode(Double?.self, column: "confidence")
                ))
            }
        }
    }

    /// Speakers in label order ("Speaker 2" before "Speaker 10").
    public func speakers(conversationID: String) throws -> [SessionSpeaker] {
        try speakers(conversationIDs: [conversationID])[conversationID] ?? []
    }

    /// Speakers of several conversations in one query, each list in label order.
    public func speakers(conversationIDs: [String]) throws -> [String: [SessionSpeaker]] {
        try withConnection { connection in
            var speakers: [String: [SessionSpeaker]] = [:]
            for row in try connection.query("""
                SELECT conversation_id, label, display_name, merged_into, first_seen_seconds FROM speakers
                WHERE conversation_id = ANY($1::text[]) ORDER BY conversation_id, length(label), label
                """, [conversationIDs]).rows {
                speakers[try row.decode(String.self, column: "conversation_id"), default: []].append(SessionSpeaker(
                    label: try row.decode(String.self, column: "label"),
                    displayName: try row.decode(String?.self, column: "display_name"),
                    mergedInto: try row.decode(String?.self, column: "merged_into"),
                    firstSeenSeconds: try row.decode(Double?.self, column: "first_seen_seconds")
                ))
            }
            return speakers
        }
    }

    public func keyLabels(conversationID: String) throws -> [String: String] {
        try withConnection { connection in
            var labels: [String: String] = [:]
            for row in try connection.query("SELECT provider_key, label FROM speaker_keys WHERE conversation_id = $1", [conversationID]).rows {
                labels[try row.decode(String.self, column: "provider_key")] = try row.decode(String.self, column: "label")
            }
            return labels
        }
    }

    /// Everything a resumed session starts from; nil when the conversation does not exist.
    public func load(conversationID: String) throws -> StoredConversation? {
        guard let record = try conversation(id: conversationID) else { return nil }
        return StoredConversation(
            state: record.state, words: try words(conversationID: conversationID),
            turns: try turns(conversationID: conversationID), speakers: try speakers(conversationID: conversationID),
            keyLabels: try keyLabels(conversationID: conversationID)
        )
    }

    public func checkHealth() throws {
        try withConnection { connection in _ = try connection.query("SELECT 1") }
    }

    private static func conversation(_ row: PGRow) throws -> ConversationRecord {
        ConversationRecord(
            state: ConversationState(
                id: try row.decode(String.self, column: "id"),
                deviceID: try row.decode(String.self, column: "device_id"),
                provider: try row.decode(String.self, column: "provider"),
                sampleRate: try row.decode(Int.self, column: "sample_rate"),
                encoding: try row.decode(String.self, column: "encoding"),
                language: try row.decode(String?.self, column: "language"),
                optionsJSON: try row.decode(String.self, column: "options"),
                status: ConversationState.Status(rawValue: try row.decode(String.self, column: "status")) ?? .interrupted,
                audioSeconds: try row.decode(Double.self, column: "audio_seconds"),
                statusReason: try row.decode(String?.self, column: "status_reason"),
                serverInstance: try row.decode(Int?.self, column: "server_instance")
            ),
            startedAt: try row.decode(Date.self, column: "started_at"),
            endedAt: try row.decode(Date?.self, column: "ended_at"),
            startedAtText: try row.decode(String.self, column: "started_at_text")
        )
    }
}
