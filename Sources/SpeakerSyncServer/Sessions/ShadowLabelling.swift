import Foundation
import PluginHost
import SpeakerSyncStore
import TranscriptMerge

/// A provider run beside the session's own on the same audio (`shadow_providers`), so providers can
/// be compared on the same speech. It has its own instance (in its own worker under process
/// isolation), its own speaker labels and its own merge of the session's words; nothing of it is
/// sent to the device, and its failure or slowness never touches the session: it stops, and what it
/// labelled is stored as incomplete. Confined to the runner's queue, like `LiveSession`.
struct ShadowLabelling {
    let provider: String
    var engine: (any ProviderSession)?
    var merger: TranscriptMerger
    var speakers: SpeakerRegistry
    var labelLatency = LabelLatencyTracker()
    private(set) var cpuSeconds = 0.0
    private(set) var chunkSeconds: [Double] = []
    /// Why it stopped before the end (its provider failed, or fell too far behind); nil while it runs
    /// or when it finished.
    private(set) var stoppedReason: String?
    /// It was asked for its final turns.
    var finishing = false

    init(provider: String, merge: MergeConfig, restored: LabellingRecord?, words: [LabelledWord]) {
        self.provider = provider
        // A resumed conversation continues the stored labelling: its turns and its own labels for the
        // words stored so far (their text and times are the conversation's).
        merger = .labelling(words, from: restored, config: merge)
        let labelsInUse = Set(restored?.turns.map(\.speaker) ?? []).sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        speakers = SpeakerRegistry(speakers: labelsInUse.map { SessionSpeaker(label: $0) }, keyLabels: [:])
    }

    var isRunning: Bool { engine != nil }

    mutating func recordProcessing(chunkWallSeconds: [Double], cpuSeconds: Double) {
        self.cpuSeconds += cpuSeconds
        chunkSeconds += chunkWallSeconds
    }

    mutating func recordProcessing(cpuSeconds: Double) { self.cpuSeconds += cpuSeconds }

    /// Stops it for good: the engine is closed and the labelling will be stored as incomplete.
    mutating func stop(reason: String) {
        engine?.close()
        engine = nil
        if stoppedReason == nil { stoppedReason = reason }
    }

    /// The provider's turns, mapped to this labelling's own labels on the conversation timeline, and
    /// merged with the session's words (the same merge the device's transcript gets).
    mutating func apply(_ providerTurns: [ProviderTurn], sessionToken: String, audioOffsetSeconds: Double, at now: Double) {
        let delta = merger.mergeProviderTurns(providerTurns, provider: provider, idPrefix: "\(provider):\(sessionToken)",
                                              keyPrefix: "\(sessionToken):", offsetSeconds: audioOffsetSeconds, speakers: &speakers)
        labelled(delta, at: now)
    }

    /// The session's words (device or server ASR), merged here as in the session.
    mutating func upsertResult(_ message: (id: String, words: [Word], isFinal: Bool), arrived: [(id: WordID, endSeconds: Double)], at now: Double) {
        labelLatency.wordsArrived(arrived, at: now)
        let delta = merger.upsertResult(id: message.id, words: message.words, isFinal: message.isFinal)
        if !delta.removedWords.isEmpty { labelLatency.wordsRemoved(delta.removedWords) }
        labelled(delta, at: now)
    }

    /// Latency is measured as for the session's own provider, to the moment a word would have been
    /// sent with a speaker (nothing is sent: the merge is where the label exists).
    private mutating func labelled(_ delta: TranscriptDelta, at now: Double) {
        guard !delta.changedWords.isEmpty else { return }
        labelLatency.labelsSent(delta.changedWords.map { (id: $0.id, speaker: $0.speaker) }, at: now)
    }

    /// What is stored for it; `interruptedReason` when the session ended without finalize.
    func record(audioSeconds: Double, interruptedReason: String?) -> LabellingRecord {
        let reason = stoppedReason ?? interruptedReason
        let stats = LabellingStats(
            audioSeconds: audioSeconds, wordCount: merger.words.count, unlabelledWordCount: merger.unlabelledWordCount,
            speakerCount: Set(merger.turns.map(\.speaker)).count, cpuSeconds: cpuSeconds, chunkSeconds: chunkSeconds,
            labelLatenciesSeconds: labelLatency.latencies().first)
        return merger.labellingRecord(name: provider, provider: provider, source: .shadow, isComplete: reason == nil,
                                      statusReason: reason, statsJSON: stats.json)
    }
}
