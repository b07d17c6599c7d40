import Foundation
import PostgresClient
import TranscriptMerge

extension ConversationRepository {
    /// The conversation's stored labellings, by name (without their turns and words).
    public func labellings(conversationID: String) throws -> [LabellingSummary] {
        try withConnection { connection in
            try connection.query("""
                SELECT l.name, l.provider, l.source, l.status, l.status_reason, l.stats::text AS stats, l.updated_at,
                       (SELECT count(*) FROM labelling_turns t WHERE t.conversation_id = l.conversation_id AND t.name = l.name)::bigint AS turns,
                       (SELECT count(DISTINCT t.speaker) FROM labelling_turns t WHERE t.conversation_id = l.conversation_id AND t.name = l.name)::bigint AS speakers,
                       w.words, w.labelled
                FROM labellings l
                LEFT JOIN LATERAL (
                    SELECT count(*)::bigint AS words, count(speaker)::bigint AS labelled FROM labelling_words w
                    WHERE w.conversation_id = l.conversation_id AND w.name = l.name) w ON true
                WHERE l.conversation_id = $1
                ORDER BY l.name
                """, [conversationID]).rows.map { row in
                LabellingSummary(
                    name: try row.decode(String.self, column: "name"), provider: try row.decode(String.self, column: "provider"),
                    source: try Self.source(row), isComplete: try row.decode(String.self, column: "status") == "complete",
                    statusReason: try row.decode(String?.self, column: "status_reason"), statsJSON: try row.decode(String.self, column: "stats"),
                    turnCount: try row.decode(Int.self, column: "turns"), wordCount: try row.decode(Int.self, column: "words"),
                    labelledWordCount: try row.decode(Int.self, column: "labelled"), speakerCount: try row.decode(Int.self, column: "speakers"),
                    updatedAt: try row.decode(Date.self, column: "updated_at"))
            }
        }
    }

    /// One stored labelling with its turns (in time order) and word labels; nil when there is none of that name.
    public func labelling(conversationID: String, name: String) throws -> LabellingRecord? {
        try withConnection { connection in
            guard let row = try connection.query("""
                SELECT provider, source, status, status_reason, stats::text AS stats, updated_at
                FROM labellings WHERE conversation_id = $1 AND name = $2
                """, [conversationID, name]).rows.first else { return nil }
            let turns = try connection.query("""
                SELECT speaker, start_seconds, end_seconds, confidence FROM labelling_turns
                WHERE conversation_id = $1 AND name = $2 ORDER BY start_seconds, end_seconds, speaker
                """, [conversationID, name]).rows.enumerated().map { index, turn in
                SpeakerTurn(id: "\(name):\(index)", speaker: try turn.decode(String.self, column: "speaker"),
                            startSeconds: try turn.decode(Double.self, column: "start_seconds"),
                            endSeconds: try turn.decode(Double.self, column: "end_seconds"),
                            confidence: try turn.decode(Double?.self, column: "confidence"))
            }
            let words = try connection.query("""
                SELECT result_id, word_index, speaker, speaker_confidence FROM labelling_words
                WHERE conversation_id = $1 AND name = $2 ORDER BY result_id, word_index
                """, [conversationID, name]).rows.map { word in
                WordLabel(id: WordID(resultID: try word.decode(String.self, column: "result_id"), index: try word.decode(Int.self, column: "word_index")),
                          speaker: try word.decode(String?.self, column: "speaker"),
                          speakerConfidence: try word.decode(Double?.self, column: "speaker_confidence"))
            }
            return LabellingRecord(
                name: name, provider: try row.decode(String.self, column: "provider"), source: try Self.source(row),
                isComplete: try row.decode(String.self, column: "status") == "complete",
                statusReason: try row.decode(String?.self, column: "status_reason"), statsJSON: try row.decode(String.self, column: "stats"),
                turns: turns, words: words, updatedAt: try row.decode(Date.self, column: "updated_at"))
        }
    }

    /// Writes one labelling whole, replacing the stored one of its name, in one transaction (for
    /// labellings made outside a session: uploaded references, re-diarization jobs).
    public func saveLabelling(conversationID: String, _ labelling: LabellingRecord) throws {
        var step = PersistStep()
        step.labellings = [labelling]
        let changes = ChangeSet([(conversationID, step)])
        try withConnection { connection in
            try connection.transaction { try changes.write(to: $0) }
        }
    }

    /// Deletes a conversation and everything stored with it (the foreign keys cascade; the words go
    /// through their trigger). False when there was none.
    public func deleteConversation(id: String) throws -> Bool {
        try withConnection { connection in
            try !connection.query("DELETE FROM conversations WHERE id = $1 RETURNING id", [id]).rows.isEmpty
        }
    }

    /// The conversation's stored audio chunks in timeline order (still FLAC); empty when none.
    public func audioChunks(conversationID: String) throws -> [StoredAudioChunk] {
        try withConnection { connection in
            try connection.query("""
                SELECT start_sample, sample_rate, sample_count, flac FROM audio_chunks
                WHERE conversation_id = $1 ORDER BY start_sample
                """, [conversationID]).rows.map { row in
                StoredAudioChunk(startSample: Int64(try row.decode(Int.self, column: "start_sample")),
                                 sampleRate: try row.decode(Int.self, column: "sample_rate"),
                                 sampleCount: try row.decode(Int.self, column: "sample_count"),
                                 flac: try row.decode(PGBytea.self, column: "flac").bytes)
            }
        }
    }

    /// Seconds of audio stored for the device's conversations (what its stored-audio quota counts).
    public func storedAudioSeconds(deviceID: String) throws -> Double {
        try withConnection { connection in
            try connection.query("""
                SELECT coalesce(sum(a.sample_count::float8 / a.sample_rate), 0) AS seconds
                FROM audio_chunks a JOIN conversations c ON c.id = a.conversation_id
                WHERE c.device_id = $1
                """, [deviceID]).rows[0].decode(Double.self, column: "seconds")
        }
    }

    /// Whether the conversation has stored audio (without reading it).
    public func hasStoredAudio(conversationID: String) throws -> Bool {
        try withConnection { connection in
            try !connection.query("SELECT 1 FROM audio_chunks WHERE conversation_id = $1 LIMIT 1", [conversationID]).rows.isEmpty
        }
    }

    /// Deletes audio stored more than `days` ago (the retention period); how many chunks went.
    public func purgeAudio(olderThanDays days: Double) throws -> Int {
        try withConnection { connection in
            try connection.query("""
                DELETE FROM audio_chunks WHERE created_at < now() - make_interval(secs => $1) RETURNING 1
                """, [days * 86_400]).rows.count
        }
    }

    private static func source(_ row: PGRow) throws -> LabellingSource {
        let text = try row.decode(String.self, column: "source")
        guard let source = LabellingSource(rawValue: text) else {
            throw StoreError(code: .invalidData, message: "column source of labellings: unknown value \(text)")
        }
        return source
    }
}
