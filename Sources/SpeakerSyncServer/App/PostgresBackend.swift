import Foundation
import Logging
import PostgresClient
import SpeakerSyncStore
import TranscriptMerge

/// PostgreSQL behind the sessions (`SessionStore`) and the HTTP routes (`ConversationReader`):
/// migrations at start, the batched `StoreWriter` for session steps, the repository for reads.
/// Sendable: every member is immutable after init and each guards its own connections.
final class PostgresBackend: SessionStore, ConversationReader, VoiceDirectory, DeviceDirectory, LabellingDirectory, ConversationEraser, @unchecked Sendable {
    let writer: StoreWriter
    /// Reads for HTTP routes (a pool of their own).
    let repository: ConversationRepository
    /// Reads for session starts, on connections HTTP traffic does not share: a busy console cannot
    /// hold up a device's start, nor a burst of starts the console.
    let startReader: ConversationRepository
    /// This server's number and lock (`ServerLease`): its sessions' conversations carry the number.
    let lease: ServerLease
    /// Background jobs (re-diarizations, test recordings), on a connection of their own.
    let jobs: JobQueue
    /// Which server runs each conversation, with fencing epochs (the fleet's registry of sessions).
    let leases: ConversationLeases
    private let leaseTimer: any DispatchSourceTimer
    /// Deletes stored audio past the retention period, hourly; nil when audio is kept forever.
    private let retentionTimer: (any DispatchSourceTimer)?

    /// Migrates, takes this server's lease, marks interrupted the conversations that servers which
    /// died left active (their sessions can be resumed) and recovers the jobs they were running.
    /// `storeObserver` hears of the writer's commits (the server's metrics).
    /// `audioRetentionDays`: stored audio older than this is deleted (0: kept until its conversation is).
    init(connectionString: String, schemaDirectory: URL, storeObserver: (any StoreWriterObserver)? = nil,
         audioRetentionDays: Double = 0, fleet: FleetConfig = .default, address: String = "", version: String = "",
         logger: Logger) throws {
        do {
            let connection = try PGConnection(connectionString: connectionString)
            DatabaseRoleCheck.warnIfPrivileged(connection, logger: logger)
            try MigrationRunner(directory: schemaDirectory, logger: logger).migrate(connection)
            writer = try StoreWriter(connectionString: connectionString, observer: storeObserver, logger: logger)
            repository = try ConversationRepository(connectionString: connectionString, logger: logger)
            startReader = try ConversationRepository(connectionString: connectionString, poolSize: SessionEnvironment.sharedStartReads.threadCount,
                                                     primed: false, logger: logger)
            lease = try ServerLease(connectionString: connectionString, leaseSeconds: fleet.leaseSeconds, address: address,
                                    version: version, logger: logger)
            leases = try ConversationLeases(connectionString: connectionString, serverInstance: lease.instance, logger: logger)
            let orphans = try lease.sweepOrphans()
            if orphans > 0 {
                logger.warning("conversations left active by a server that stopped are now interrupted", metadata: ["count": "\(orphans)"])
            }
            // Likewise the jobs such a server was running: queued again, or failed with the reason.
            jobs = try JobQueue(connectionString: connectionString, serverInstance: lease.instance, logger: logger)
            try jobs.recoverOrphans()
        } catch let error as PGError where error.code == .connectionFailed {
            throw ServerError(code: .databaseUnavailable, message: error.message)
        }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "speakersync.server-lease"))
        // Four renewals per lease: one lost statement never lapses it.
        let renewSeconds = max(0.25, fleet.leaseSeconds / 4)
        timer.schedule(deadline: .now() + renewSeconds, repeating: renewSeconds, leeway: .milliseconds(Int(renewSeconds * 100)))
        timer.setEventHandler { [lease] in lease.renew() }
        timer.resume()
        leaseTimer = timer
        if audioRetentionDays > 0 {
            let purge = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "speakersync.audio-retention"))
            purge.schedule(deadline: .now() + 60, repeating: 3600, leeway: .seconds(60))
            purge.setEventHandler { [repository] in
                do {
                    let deleted = try repository.purgeAudio(olderThanDays: audioRetentionDays)
                    if deleted > 0 { logger.info("stored audio past its retention deleted", metadata: ["chunks": "\(deleted)", "days": "\(audioRetentionDays)"]) }
                } catch {
                    logger.warning("stored audio could not be purged; retrying in an hour", metadata: ["error": "\(error)"])
                }
            }
            purge.resume()
            retentionTimer = purge
        } else {
            retentionTimer = nil
        }
    }

    func shutdown() {
        retentionTimer?.cancel()
        writer.shutdown()
        // After the last write: the fleet may claim this server's conversations at once.
        leaseTimer.cancel()
        lease.end()
    }

    // MARK: Fleet (SessionStore)

    func claimConversation(_ conversationID: String, deviceID: String) throws -> FleetClaim {
        switch try leases.claim(conversationID: conversationID, deviceID: deviceID) {
        case .acquired(let epoch): .fenced(WriteFence(epoch: epoch, serverInstance: lease.instance))
        case .held(let holder): .held(serverInstance: holder)
        }
    }

    func requestHandover(conversationID: String, holder: Int) throws {
        try leases.requestHandover(conversationID: conversationID, from: holder)
    }

    func releaseConversation(_ conversationID: String, fence: WriteFence) throws {
        try leases.release(conversationID: conversationID, epoch: fence.epoch)
    }

    // MARK: SessionStore

    func persist(_ step: PersistStep, conversationID: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writer.enqueue(step, conversationID: conversationID, completion: completion)
    }

    func load(conversationID: String) throws -> StoredConversation? {
        try startReader.load(conversationID: conversationID)
    }

    func voices(deviceID: String, conversationID: String, provider: String) throws -> (people: [PersonRecord], speakers: [SpeakerProfileRecord]) {
        (try startReader.people(deviceID: deviceID, provider: provider),
         try startReader.speakerProfiles(conversationID: conversationID, provider: provider))
    }

    func owningDevice(conversationID: String) throws -> String? {
        try startReader.conversation(id: conversationID)?.state.deviceID
    }

    func deviceSettings(deviceID: String) throws -> DeviceSettingsRecord { try repository.deviceSettings(deviceID: deviceID) }
    func setDeviceProvider(deviceID: String, provider: String?) throws -> DeviceSettingsRecord {
        try repository.setDeviceProvider(deviceID: deviceID, provider: provider)
    }
    func devices(limit: Int) throws -> [DeviceRecord] { try repository.devices(limit: limit) }
    func speakers(conversationID: String) throws -> [SessionSpeaker] { try repository.speakers(conversationID: conversationID) }
    func saveSpeakers(conversationID: String, _ speakers: [SessionSpeaker], relabel: (from: String, to: String)?) throws {
        try repository.saveSpeakers(conversationID: conversationID, speakers, relabel: relabel)
    }

    func deviceProvider(deviceID: String) throws -> String? {
        try startReader.deviceSettings(deviceID: deviceID).provider
    }

    func labelling(conversationID: String, name: String) throws -> LabellingRecord? {
        try startReader.labelling(conversationID: conversationID, name: name)
    }

    func storedAudioSeconds(deviceID: String) throws -> Double {
        try startReader.storedAudioSeconds(deviceID: deviceID)
    }

    func deleteConversation(id: String) throws -> Bool {
        try repository.deleteConversation(id: id)
    }

    func saveLabelling(conversationID: String, _ labelling: LabellingRecord) throws {
        try repository.saveLabelling(conversationID: conversationID, labelling)
    }

    func words(conversationID: String) throws -> [LabelledWord] {
        try repository.words(conversationID: conversationID)
    }

    func audioChunks(conversationID: String) throws -> [StoredAudioChunk] {
        try repository.audioChunks(conversationID: conversationID)
    }

    func hasStoredAudio(conversationID: String) throws -> Bool {
        try repository.hasStoredAudio(conversationID: conversationID)
    }

    // MARK: VoiceDirectory

    func insertPerson(_ person: PersonRecord) throws { try repository.insertPerson(person) }
    func people(deviceID: String) throws -> [PersonRecord] { try repository.people(deviceID: deviceID, provider: nil) }
    func deletePerson(id: String, deviceID: String?) throws -> Bool { try repository.deletePerson(id: id, deviceID: deviceID) }
    func speakerProfile(conversationID: String, label: String, provider: String) throws -> SpeakerProfileRecord? {
        try repository.speakerProfiles(conversationID: conversationID, provider: provider).first { $0.label == label }
    }

    // MARK: ConversationReader

    func listConversations(deviceID: String?, limit: Int, cursor: String?) throws -> ConversationPage {
        var before: (String, String)?
        if let cursor {
            guard let decoded = ConversationCursor.decode(cursor) else {
                throw APIError(status: 400, code: "invalid_parameter", message: "cursor is not one this server issued")
            }
            before = decoded
        }
        let records: [ConversationRecord]
        do {
            records = try repository.listConversations(deviceID: deviceID, limit: limit + 1, before: before)
        } catch let error as PGError where before != nil && error.sqlState?.hasPrefix("22") == true {
            // A data exception (22xxx, e.g. 22007 on a forged timestamp) can only come from the cursor's
            // text: the client's mistake, not the database being unavailable.
            throw APIError(status: 400, code: "invalid_parameter", message: "cursor is not one this server issued")
        }
        let page = Array(records.prefix(limit))
        let next = records.count > limit ? page.last.map { ConversationCursor.encode(startedAt: $0.startedAtText, id: $0.state.id) } : nil
        return ConversationPage(conversations: try summaries(page), nextCursor: next)
    }

    func conversation(id: String) throws -> ConversationSummary? {
        guard let record = try repository.conversation(id: id) else { return nil }
        return try summaries([record]).first
    }

    func transcript(id: String) throws -> TranscriptDocument? {
        guard try repository.conversation(id: id) != nil else { return nil }
        let registry = SpeakerRegistry(speakers: try repository.speakers(conversationID: id), keyLabels: [:])
        let words = try repository.words(conversationID: id)
        var utterances: [Utterance] = []
        var indexByID: [UtteranceID: Int] = [:]
        for word in words {
            if let index = indexByID[word.utteranceID] {
                utterances[index].words.append(word)
                utterances[index].endSeconds = max(utterances[index].endSeconds, word.endSeconds)
            } else {
                indexByID[word.utteranceID] = utterances.count
                utterances.append(Utterance(id: word.utteranceID, speaker: word.speaker, startSeconds: word.startSeconds, endSeconds: word.endSeconds, text: "", words: [word]))
            }
        }
        for index in utterances.indices {
            utterances[index].text = utterances[index].words.map(\.text).joined(separator: " ")
        }
        utterances.sort { ($0.startSeconds, $0.endSeconds, $0.id) < ($1.startSeconds, $1.endSeconds, $1.id) }
        var names: [String: String] = [:]
        for speaker in registry.speakers { names[speaker.label] = registry.name(for: speaker.label) }
        return TranscriptDocument(conversationID: id, utterances: utterances, names: names)
    }

    func checkHealth() throws {
        try repository.checkHealth()
    }

    func labellings(conversationID: String) throws -> [LabellingSummary] {
        try repository.labellings(conversationID: conversationID)
    }

    /// The conversation's words with the labelling's speakers, grouped as the merge groups them: a new
    /// utterance wherever the speaker changes in time order. A live labelling keeps the names people
    /// gave its speakers; another provider's labels are its own and have no names.
    func transcript(id: String, labelling name: String) throws -> TranscriptDocument? {
        guard let labelling = try repository.labelling(conversationID: id, name: name) else { return nil }
        let labels = Dictionary(labelling.words.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let words = try repository.words(conversationID: id)
            .filter { labels[$0.id] != nil }
            .sorted { ($0.startSeconds, $0.endSeconds, $0.id) < ($1.startSeconds, $1.endSeconds, $1.id) }
        var utterances: [Utterance] = []
        for var word in words {
            word.speaker = labels[word.id]?.speaker
            word.speakerConfidence = labels[word.id]?.speakerConfidence
            if let last = utterances.indices.last, utterances[last].speaker == word.speaker {
                word.utteranceID = utterances[last].id
                utterances[last].words.append(word)
                utterances[last].endSeconds = max(utterances[last].endSeconds, word.endSeconds)
            } else {
                word.utteranceID = UtteranceID(rawValue: UInt64(utterances.count + 1))
                utterances.append(Utterance(id: word.utteranceID, speaker: word.speaker, startSeconds: word.startSeconds,
                                            endSeconds: word.endSeconds, text: "", words: [word]))
            }
        }
        for index in utterances.indices {
            utterances[index].text = utterances[index].words.map(\.text).joined(separator: " ")
        }
        var names: [String: String] = [:]
        if labelling.source == .live {
            let registry = SpeakerRegistry(speakers: try repository.speakers(conversationID: id), keyLabels: [:])
            for speaker in registry.speakers { names[speaker.label] = registry.name(for: speaker.label) }
        }
        return TranscriptDocument(conversationID: id, utterances: utterances, names: names)
    }

    /// Summaries of a page of conversations: word counts and speakers come in one query each.
    private func summaries(_ records: [ConversationRecord]) throws -> [ConversationSummary] {
        let ids = records.map(\.state.id)
        let counts = try repository.wordCounts(conversationIDs: ids)
        let speakers = try repository.speakers(conversationIDs: ids)
        return records.map { record in
            let count = counts[record.state.id] ?? (0, 0)
            return ConversationSummary(
                id: record.state.id, deviceID: record.state.deviceID, provider: record.state.provider,
                sampleRate: record.state.sampleRate, status: record.state.status.rawValue, statusReason: record.state.statusReason,
                audioSeconds: record.state.audioSeconds, startedAt: record.startedAt, endedAt: record.endedAt,
                wordCount: count.total, unlabelledWordCount: count.unlabelled,
                speakers: speakers[record.state.id] ?? []
            )
        }
    }
}
