import FLACCodec
import PostgresClient
import TranscriptMerge

/// The steps of one writer drain folded into one change per row (the later step wins), written with
/// one `unnest` statement per table and kind. Bind parameters only: every value travels in a
/// PostgreSQL array literal bound to `$n`.
struct ChangeSet {
    private struct WordKey: Hashable { var conversationID: String; var id: WordID }
    private struct TurnKey: Hashable { var conversationID: String; var turnID: String }
    private struct SpeakerKey: Hashable { var conversationID: String; var label: String }
    private struct LabelKey: Hashable { var conversationID: String; var providerKey: String }
    private struct ProfileKey: Hashable { var conversationID: String; var label: String; var provider: String }
    private struct LabellingKey: Hashable { var conversationID: String; var name: String }

    private var conversations: [String: ConversationState] = [:]
    private var conversationOrder: [String] = []
    private var words: [WordKey: LabelledWord?] = [:]
    private var turns: [TurnKey: (provider: String, turn: SpeakerTurn)?] = [:]
    private var speakers: [SpeakerKey: SessionSpeaker] = [:]
    private var labels: [LabelKey: String] = [:]
    private var profiles: [ProfileKey: SpeakerProfileRecord] = [:]
    private var labellings: [LabellingKey: LabellingRecord] = [:]
    /// Audio chunks compressed when the change set is built (on the writer's encoding thread).
    private var audio: [(conversationID: String, chunk: AudioChunkRecord, flac: Result<[UInt8], any Error>)] = []
    /// The word upserts in COPY text format, encoded when the change set is built (on the writer's
    /// encoding thread, while the previous drain is still being committed).
    private(set) var wordCopyData: [UInt8] = []
    private(set) var wordUpsertCount = 0
    /// The fencing epochs the steps carry, with how many steps carried each (`WriteFencing.swift`).
    private(set) var fences: [FencedConversation: Int] = [:]
    /// The leases the drain's session ends give up (`PersistStep.releasesLease`).
    private(set) var leaseReleases: Set<FencedConversation> = []

    init(_ steps: [(conversationID: String, step: PersistStep)]) {
        for (id, step) in steps {
            if let fence = step.fence {
                let fenced = FencedConversation(conversationID: id, fence: fence)
                fences[fenced, default: 0] += 1
                if step.releasesLease { leaseReleases.insert(fenced) }
            }
            if let state = step.conversation {
                if conversations.updateValue(state, forKey: id) == nil { conversationOrder.append(id) }
            }
            for word in step.changedWords { words[WordKey(conversationID: id, id: word.id)] = .some(word) }
            for wordID in step.removedWords { words[WordKey(conversationID: id, id: wordID)] = .some(nil) }
            for (provider, turn) in step.upsertedTurns { turns[TurnKey(conversationID: id, turnID: turn.id)] = .some((provider, turn)) }
            for (_, turnID) in step.removedTurns { turns[TurnKey(conversationID: id, turnID: turnID)] = .some(nil) }
            for speaker in step.speakers { speakers[SpeakerKey(conversationID: id, label: speaker.label)] = speaker }
            for (key, label) in step.keyLabels { labels[LabelKey(conversationID: id, providerKey: key)] = label }
            for (provider, profile) in step.speakerProfiles {
                profiles[ProfileKey(conversationID: id, label: profile.label, provider: provider)] = profile
            }
            for labelling in step.labellings { labellings[LabellingKey(conversationID: id, name: labelling.name)] = labelling }
            for chunk in step.audioChunks {
                audio.append((id, chunk, Result { try FLACEncoder.encode(chunk.samples, sampleRate: chunk.sampleRate) }))
            }
        }
        encodeWordUpserts()
    }

    private mutating func encodeWordUpserts() {
        var copy = PGCopyText(reservingCapacity: words.count * 96)
        var count = 0
        for (key, word) in words {
            guard let word else { continue }
            count += 1
            copy.append(key.conversationID)
            copy.append(word.id.resultID)
            copy.append(word.id.index)
            copy.append(word.text)
            copy.append(word.startSeconds)
            copy.append(word.endSeconds)
            copy.append(word.confidence)
            copy.append(word.isFinal)
            copy.append(word.speaker)
            copy.append(word.speakerConfidence)
            copy.append(Int64(bitPattern: word.utteranceID.rawValue))
            copy.endRow()
        }
        wordCopyData = copy.bytes
        wordUpsertCount = count
    }

    func write(to connection: PGConnection) throws {
        try checkFences(on: connection)
        try writeConversations(connection)
        try writeSpeakers(connection)
        try writeWords(connection)
        try writeTurns(connection)
        try writeProfiles(connection)
        try writeLabellings(connection)
        try writeAudio(connection)
        try recordFencedWrites(on: connection)
        try releaseLeases(on: connection)
    }

    /// A chunk written again (a step retried) replaces itself.
    private func writeAudio(_ connection: PGConnection) throws {
        guard !audio.isEmpty else { return }
        var flac: [PGBytea] = []
        for item in audio {
            switch item.flac {
            case .success(let bytes): flac.append(PGBytea(bytes))
            case .failure(let error):
                throw StoreError(code: .invalidData, message: "audio chunk at sample \(item.chunk.startSample) could not be compressed: \(error)")
            }
        }
        try connection.execute("""
            INSERT INTO audio_chunks (conversation_id, start_sample, sample_rate, sample_count, flac)
            SELECT * FROM unnest($1::text[], $2::int8[], $3::int[], $4::int[], $5::bytea[])
            ON CONFLICT (conversation_id, start_sample) DO UPDATE SET
                sample_rate = EXCLUDED.sample_rate, sample_count = EXCLUDED.sample_count, flac = EXCLUDED.flac
            """, [
                audio.map(\.conversationID), audio.map(\.chunk.startSample), audio.map(\.chunk.sampleRate),
                audio.map(\.chunk.samples.count), flac,
            ])
    }

    /// Each labelling replaces the stored one of its name: its row upserted, its turns and words
    /// deleted and inserted again (a labelling is written once per session end, so whole is simplest).
    private func writeLabellings(_ connection: PGConnection) throws {
        guard !labellings.isEmpty else { return }
        let rows = labellings.sorted { ($0.key.conversationID, $0.key.name) < ($1.key.conversationID, $1.key.name) }
        try connection.execute("""
            INSERT INTO labellings (conversation_id, name, provider, source, status, status_reason, stats, updated_at)
            SELECT u.conversation_id, u.name, u.provider, u.source, u.status, u.status_reason, u.stats, now()
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])
                 AS u(conversation_id, name, provider, source, status, status_reason, stats)
            ON CONFLICT (conversation_id, name) DO UPDATE SET
                provider = EXCLUDED.provider, source = EXCLUDED.source, status = EXCLUDED.status,
                status_reason = EXCLUDED.status_reason, stats = EXCLUDED.stats, updated_at = now()
            """, [
                rows.map(\.key.conversationID), rows.map(\.key.name), rows.map(\.value.provider),
                rows.map(\.value.source.rawValue), rows.map { $0.value.isComplete ? "complete" : "incomplete" },
                rows.map(\.value.statusReason), rows.map(\.value.statsJSON),
            ])
        let ids = rows.map(\.key.conversationID), names = rows.map(\.key.name)
        for table in ["labelling_turns", "labelling_words"] {
            try connection.execute("""
                DELETE FROM \(table) t USING unnest($1::text[], $2::text[]) AS d(conversation_id, name)
                WHERE t.conversation_id = d.conversation_id AND t.name = d.name
                """, [ids, names])
        }
        let turns = rows.flatMap { row in row.value.turns.map { (row.key, $0) } }
        if !turns.isEmpty {
            try connection.execute("""
                INSERT INTO labelling_turns (conversation_id, name, speaker, start_seconds, end_seconds, confidence)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::float8[], $6::float8[])
                """, [
                    turns.map(\.0.conversationID), turns.map(\.0.name), turns.map(\.1.speaker),
                    turns.map(\.1.startSeconds), turns.map(\.1.endSeconds), turns.map(\.1.confidence),
                ])
        }
        let words = rows.flatMap { row in row.value.words.map { (row.key, $0) } }
        if !words.isEmpty {
            try connection.execute("""
                INSERT INTO labelling_words (conversation_id, name, result_id, word_index, speaker, speaker_confidence)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::float8[])
                """, [
                    words.map(\.0.conversationID), words.map(\.0.name), words.map(\.1.id.resultID),
                    words.map(\.1.id.index), words.map(\.1.speaker), words.map(\.1.speakerConfidence),
                ])
        }
    }

    /// Each embedding travels as one comma-separated text element and becomes `real[]` in the statement.
    private func writeProfiles(_ connection: PGConnection) throws {
        guard !profiles.isEmpty else { return }
        let rows = Array(profiles)
        try connection.execute("""
            INSERT INTO speaker_profiles (conversation_id, label, provider, embedding, speech_seconds)
            SELECT u.conversation_id, u.label, u.provider, string_to_array(u.embedding, ',')::real[], u.speech_seconds
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[])
                 AS u(conversation_id, label, provider, embedding, speech_seconds)
            ON CONFLICT (conversation_id, label, provider)
            DO UPDATE SET embedding = EXCLUDED.embedding, speech_seconds = EXCLUDED.speech_seconds, updated_at = now()
            """, [
                rows.map(\.key.conversationID), rows.map(\.key.label), rows.map(\.key.provider),
                rows.map { $0.value.embedding.map(\.pgText).joined(separator: ",") }, rows.map(\.value.speechSeconds),
            ])
    }

    private func writeConversations(_ connection: PGConnection) throws {
        guard !conversationOrder.isEmpty else { return }
        let states = conversationOrder.map { conversations[$0]! }
        try connection.execute("""
            INSERT INTO conversations AS c (id, device_id, provider, sample_rate, encoding, language, options, status, audio_seconds,
                                            ended_at, status_reason, server_instance)
            SELECT u.id, u.device_id, u.provider, u.sample_rate, u.encoding, u.language, u.options, u.status, u.audio_seconds,
                   CASE WHEN u.status = 'active' THEN NULL ELSE now() END, u.status_reason, u.server_instance
            FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::jsonb[], $8::text[], $9::float8[],
                        $10::text[], $11::int[])
                 AS u(id, device_id, provider, sample_rate, encoding, language, options, status, audio_seconds, status_reason, server_instance)
            ON CONFLICT (id) DO UPDATE SET
                device_id = EXCLUDED.device_id, provider = EXCLUDED.provider, sample_rate = EXCLUDED.sample_rate,
                encoding = EXCLUDED.encoding, language = EXCLUDED.language, options = EXCLUDED.options,
                status = EXCLUDED.status, audio_seconds = EXCLUDED.audio_seconds, ended_at = EXCLUDED.ended_at,
                status_reason = EXCLUDED.status_reason, server_instance = EXCLUDED.server_instance,
                updated_at = now()
            """, [
                states.map(\.id), states.map(\.deviceID), states.map(\.provider), states.map(\.sampleRate),
                states.map(\.encoding), states.map(\.language), states.map(\.optionsJSON),
                states.map(\.status.rawValue), states.map(\.audioSeconds),
                states.map { $0.status == .interrupted ? $0.statusReason : nil }, states.map(\.serverInstance),
            ])
    }

    private func writeSpeakers(_ connection: PGConnection) throws {
        if !speakers.isEmpty {
            let rows = Array(speakers)
            try connection.execute("""
                INSERT INTO speakers (conversation_id, label, display_name, merged_into, first_seen_seconds)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[])
                ON CONFLICT (conversation_id, label) DO UPDATE SET
                    display_name = EXCLUDED.display_name, merged_into = EXCLUDED.merged_into,
                    first_seen_seconds = coalesce(speakers.first_seen_seconds, EXCLUDED.first_seen_seconds)
                """, [
                    rows.map(\.key.conversationID), rows.map(\.value.label), rows.map(\.value.displayName),
                    rows.map(\.value.mergedInto), rows.map(\.value.firstSeenSeconds),
                ])
        }
        if !labels.isEmpty {
            let rows = Array(labels)
            try connection.execute("""
                INSERT INTO speaker_keys (conversation_id, provider_key, label)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
                ON CONFLICT (conversation_id, provider_key) DO UPDATE SET label = EXCLUDED.label
                """, [rows.map(\.key.conversationID), rows.map(\.key.providerKey), rows.map(\.value)])
        }
    }

    private func writeWords(_ connection: PGConnection) throws {
        let deletions = words.filter { $0.value == nil }.map(\.key)
        if !deletions.isEmpty {
            try connection.execute("""
                DELETE FROM words w USING unnest($1::text[], $2::text[], $3::int[]) AS d(conversation_id, result_id, word_index)
                WHERE w.conversation_id = d.conversation_id AND w.result_id = d.result_id AND w.word_index = d.word_index
                """, [deletions.map(\.conversationID), deletions.map(\.id.resultID), deletions.map(\.id.index)])
        }
        guard wordUpsertCount > 0 else { return }
        // COPY into the session-local staging table, then one INSERT … ON CONFLICT: COPY's text
        // format is parsed far faster by PostgreSQL than large array literals.
        try connection.copyIn("""
            COPY words_staging (conversation_id, result_id, word_index, text, start_seconds, end_seconds, confidence,
                                is_final, speaker, speaker_confidence, utterance_id) FROM STDIN
            """, data: wordCopyData)
        try connection.execute("""
            INSERT INTO words (conversation_id, result_id, word_index, text, start_seconds, end_seconds, confidence,
                               is_final, speaker, speaker_confidence, utterance_id)
            SELECT conversation_id, result_id, word_index, text, start_seconds, end_seconds, confidence,
                   is_final, speaker, speaker_confidence, utterance_id FROM words_staging
            ON CONFLICT (conversation_id, result_id, word_index) DO UPDATE SET
                text = EXCLUDED.text, start_seconds = EXCLUDED.start_seconds, end_seconds = EXCLUDED.end_seconds,
                confidence = EXCLUDED.confidence, is_final = EXCLUDED.is_final, speaker = EXCLUDED.speaker,
                speaker_confidence = EXCLUDED.speaker_confidence, utterance_id = EXCLUDED.utterance_id, updated_at = now()
            """)
    }

    /// The staging table `writeWords` copies into; created once per connection, emptied at each commit.
    static let createStagingTable = """
        CREATE TEMPORARY TABLE words_staging (
            conversation_id text, result_id text, word_index integer, text text, start_seconds double precision,
            end_seconds double precision, confidence double precision, is_final boolean, speaker text,
            speaker_confidence double precision, utterance_id bigint
        ) ON COMMIT DELETE ROWS
        """

    private func writeTurns(_ connection: PGConnection) throws {
        let deletions = turns.filter { $0.value == nil }.map(\.key)
        if !deletions.isEmpty {
            try connection.execute("""
                DELETE FROM speaker_turns t USING unnest($1::text[], $2::text[]) AS d(conversation_id, turn_id)
                WHERE t.conversation_id = d.conversation_id AND t.turn_id = d.turn_id
                """, [deletions.map(\.conversationID), deletions.map(\.turnID)])
        }
        let upserts = turns.compactMap { key, value in value.map { (key.conversationID, $0.provider, $0.turn) } }
        guard !upserts.isEmpty else { return }
        try connection.execute("""
            INSERT INTO speaker_turns (conversation_id, turn_id, provider, speaker, start_seconds, end_seconds, confidence)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::float8[])
            ON CONFLICT (conversation_id, turn_id) DO UPDATE SET
                provider = EXCLUDED.provider, speaker = EXCLUDED.speaker, start_seconds = EXCLUDED.start_seconds,
                end_seconds = EXCLUDED.end_seconds, confidence = EXCLUDED.confidence
            """, [
                upserts.map(\.0), upserts.map(\.2.id), upserts.map(\.1), upserts.map(\.2.speaker),
                upserts.map(\.2.startSeconds), upserts.map(\.2.endSeconds), upserts.map(\.2.confidence),
            ])
    }
}
