import Foundation
import ProviderInterface
import SpeakerSyncStore
import TranscriptMerge

/// One provider's labels for a conversation's words: its provider instance, the speaker registry
/// that turns the instance's speaker indices into labels, the merge of the conversation's words
/// with its turns, and its figures. A live session's own provider (what the device is sent), every
/// shadow provider, a re-diarization and an uploaded reference are each a `Labelling`, so the
/// labellings being compared are made the same way. Confined to its owner's queue.
struct Labelling {
    let source: LabellingSource
    let scope: ProviderInstanceScope
    var provider: String { scope.provider }
    /// The provider instance, until it has given its final turns, failed or been stopped.
    var engine: (any ProviderSession)?
    var merger: TranscriptMerger
    var speakers: SpeakerRegistry
    /// Enrolled people the instance was told about, by the speaker index it reports them under.
    var people: [Int32: String] = [:]
    var labelLatency = LabelLatencyTracker()
    private(set) var cpuSeconds = 0.0
    /// Provider wall time per audio chunk (8 bytes each: an hour in 100 ms chunks is 288 KB).
    private(set) var chunkSeconds: [Double] = []
    /// This instance's speaker indices and the label each was first given (merges are followed when
    /// read): what its voice profiles are saved under.
    private(set) var instanceSpeakers: [Int32: String] = [:]
    /// Which provider made each turn the merge holds (turn ids are stored per provider).
    private(set) var turnProviders: [String: String] = [:]
    /// Why it stopped before the end (its provider failed, or fell too far behind); nil while it runs
    /// or when it finished.
    private(set) var stoppedReason: String?
    /// It was asked for its final turns.
    var finishing = false

    init(source: LabellingSource, scope: ProviderInstanceScope, merger: TranscriptMerger, speakers: SpeakerRegistry,
         turnProviders: [String: String] = [:]) {
        self.source = source
        self.scope = scope
        self.merger = merger
        self.speakers = speakers
        self.turnProviders = turnProviders
    }

    /// A labelling of `words` beside the conversation's own (a shadow, a re-diarization): it continues
    /// `restored` (its stored turns and its own labels for the words) when there is one.
    init(source: LabellingSource, scope: ProviderInstanceScope, words: [LabelledWord], restored: LabellingRecord?, merge: MergeConfig) {
        let labelsInUse = Set(restored?.turns.map(\.speaker) ?? []).sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        self.init(source: source, scope: scope, merger: .labelling(words, from: restored, config: merge),
                  speakers: SpeakerRegistry(speakers: labelsInUse.map { SessionSpeaker(label: $0) }, keyLabels: [:]))
    }

    var isRunning: Bool { engine != nil }

    mutating func recordProcessing(chunkWallSeconds: [Double], cpuSeconds: Double) {
        self.cpuSeconds += cpuSeconds
        chunkSeconds += chunkWallSeconds
    }

    /// Provider work outside any chunk (draining, the offline pass at finalize): CPU only.
    mutating func recordProcessing(cpuSeconds: Double) { self.cpuSeconds += cpuSeconds }

    /// Stops it for good: the engine is closed and the labelling will be stored as incomplete.
    mutating func stop(reason: String) {
        engine?.close()
        engine = nil
        if stoppedReason == nil { stoppedReason = reason }
    }

    /// Binds one of the instance's speaker indices to an existing label (a voice the instance was
    /// told about), so its turns continue that speaker.
    mutating func bind(_ speaker: Int32, to label: String) {
        speakers.bind(provider: provider, key: scope.speakerKey(speaker), to: label)
        if speakers.speaker(label) != nil { instanceSpeakers[speaker] = label }
    }

    /// Turns someone else made (the device's segments), merged under their provider's name.
    mutating func upsertTurns(_ turns: [SpeakerTurn], provider: String) -> TranscriptDelta {
        for turn in turns { turnProviders[turn.id] = provider }
        return merger.upsertTurns(turns)
    }

    /// The instance's turns: each mapped to the label its speaker has (a new one on first sight, an
    /// enrolled person's existing speaker, or a new speaker named after them), shifted onto the
    /// conversation timeline, and merged with the words.
    mutating func apply(_ providerTurns: [ProviderTurn]) -> LabellingChange {
        var change = LabellingChange()
        for turn in providerTurns {
            let id = scope.turnID(turn.turnID)
            if turn.isRemoved {
                change.removedTurnIDs.append(id)
                continue
            }
            let start = turn.startSeconds + scope.offsetSeconds
            let key = scope.speakerKey(turn.speaker)
            var (label, created) = speakers.label(provider: provider, key: key, heardAtSeconds: start)
            if let fresh = created, let person = people[turn.speaker] {
                // An enrolled person: reuse their speaker if the conversation already has them, else name the new one.
                if let existing = speakers.speakers.first(where: { $0.name == person && $0.mergedInto == nil && $0.label != fresh.label }) {
                    speakers.bind(provider: provider, key: key, to: existing.label)
                    change.keyLabels[scope.registryKey(turn.speaker)] = existing.label
                    label = existing.label
                    created = nil
                } else if let named = try? speakers.rename(fresh.label, to: person) {
                    created = named
                }
            }
            if let created {
                change.speakers.append(created)
                change.keyLabels[scope.registryKey(turn.speaker)] = created.label
            }
            if instanceSpeakers[turn.speaker] == nil { instanceSpeakers[turn.speaker] = label }
            change.upsertedTurns.append(SpeakerTurn(id: id, speaker: label, startSeconds: start,
                                                    endSeconds: turn.endSeconds + scope.offsetSeconds, confidence: turn.confidence))
        }
        for turn in change.upsertedTurns { turnProviders[turn.id] = provider }
        change.delta = change.removedTurnIDs.isEmpty ? TranscriptDelta() : merger.removeTurns(ids: change.removedTurnIDs)
        if !change.upsertedTurns.isEmpty { change.delta = change.delta.followed(by: merger.upsertTurns(change.upsertedTurns)) }
        return change
    }

    /// Latency is measured to the moment a word has a speaker in this merge (what the device is
    /// sent, for the session's own labelling; for the others, when it would have been).
    mutating func labelled(_ delta: TranscriptDelta, at now: Double) {
        guard !delta.changedWords.isEmpty else { return }
        labelLatency.labelsSent(delta.changedWords.map { (id: $0.id, speaker: $0.speaker) }, at: now)
    }

    /// The session's words (the device's or the server's ASR), merged here as in the session.
    mutating func upsertResult(_ message: (id: String, words: [Word], isFinal: Bool), arrived: [(id: WordID, endSeconds: Double)],
                               at now: Double) -> TranscriptDelta {
        labelLatency.wordsArrived(arrived, at: now)
        let delta = merger.upsertResult(id: message.id, words: message.words, isFinal: message.isFinal)
        if !delta.removedWords.isEmpty { labelLatency.wordsRemoved(delta.removedWords) }
        return delta
    }

    /// The provider that made a turn this merge holds (the stored turns of earlier sessions included).
    func provider(ofTurn id: String) -> String { turnProviders[id] ?? provider }

    /// Each of the instance's speakers with the label it now stands for (merges followed).
    var resolvedInstanceSpeakers: [(speaker: Int32, label: String)] {
        instanceSpeakers.map { ($0.key, speakers.resolve($0.value)) }
    }

    /// Its figures as stored with it and reported by compare.
    func stats(audioSeconds: Double) -> LabellingStats {
        LabellingStats(
            audioSeconds: audioSeconds, wordCount: merger.words.count, unlabelledWordCount: merger.unlabelledWordCount,
            speakerCount: Set(merger.turns.map(\.speaker)).count, cpuSeconds: cpuSeconds, chunkSeconds: chunkSeconds,
            labelLatenciesSeconds: labelLatency.latencies().first)
    }

    /// What is stored for it; `interruptedReason` when the session ended without finalize.
    /// `speakerCount` overrides the count of labels in its turns (the session's own labelling counts
    /// its active speakers, as the device's `stats` does).
    func record(name: String? = nil, audioSeconds: Double, interruptedReason: String?, speakerCount: Int? = nil) -> LabellingRecord {
        let reason = stoppedReason ?? interruptedReason
        var stats = stats(audioSeconds: audioSeconds)
        if let speakerCount { stats.speakerCount = speakerCount }
        return merger.labellingRecord(name: name ?? provider, provider: provider, source: source, isComplete: reason == nil,
                                      statusReason: reason, statsJSON: stats.json)
    }
}
