import SpeakerSyncStore
import Foundation
import Logging
import OpusCodec
import PluginHost
import SessionProtocol
import SpeakerSyncAudio
import TranscriptMerge

/// The state of a started session, owned by its `SessionRunner` and confined to the runner's queue.
/// A class, so the runner reaches it through one reference: as a struct behind an optional it was
/// either force-unwrapped at every use or copied, and a copy shares the transcript's storage, so the
/// next write copied all of it (11.5 MB per update at 50,000 words).
final class LiveSession {
    let request: StartRequest
    let conversationID: String
    /// Scopes this session's provider turn ids and cluster keys: a provider instance numbers its
    /// turns and clusters from zero, so a resumed session must not collide with the earlier one.
    let sessionToken: String
    /// Where this session's first sample lies on the conversation timeline.
    let audioOffsetSeconds: Double
    /// The conversation existed before this session (a resume).
    let isResumed: Bool
    var conversation: ConversationState
    /// The session's own provider: the labels the device is sent (its engine is nil for `device`
    /// and `off`, whose turns come from the device or not at all).
    var labelling: Labelling
    /// `store_audio`: cuts the received audio into chunks to store.
    var audioChunker: AudioChunker?
    /// The conversation's lease in the fleet; every step of the session carries it (nil: unfenced).
    var fence: WriteFence?
    /// Seconds of audio this session may still store (the device's quota); nil: no quota.
    var audioQuotaRemainingSeconds: Double?
    /// Why `store_audio` is not honoured, told to the device once `session` is sent.
    var audioNotStoredReason: String?
    /// Providers run beside the session's own on the same audio (`shadow_providers`), in the start's
    /// order: each stops on its own failure or backlog and never touches the session; nothing of them
    /// is sent to the device.
    var shadows: [Labelling] = []
    var resampler: StreamingResampler?
    /// `asr: "server"`: the session's speech recogniser, until it has finished.
    var recognizer: SessionRecognizer?
    /// CPU the recogniser took over the session, once it has finished (for its real-time factor).
    var recognizerCPUSeconds: Double?
    /// Encoding `opus`: this session's decoder, at the start's sample rate.
    var opusDecoder: OpusDecoder?
    var inputSampleCount = 0
    var finalized = false
    private var savedAudioSeconds: Double
    /// Provider speaker indices of known voices, chosen by the host: enrolled people from
    /// `personSpeakerBase`, the conversation's earlier speakers from `conversationSpeakerBase`.
    static let personSpeakerBase: Int32 = 1_000_000
    static let conversationSpeakerBase: Int32 = 2_000_000
    var liveTurns = LiveTurnTimeline()
    private let clockOrigin = ContinuousClock.now
    /// When the session began (wall clock), for the console's list of live sessions.
    let startedAt = Date()

    /// How far before the stored audio end a resume may ask for audio again (see `resumeOffsetSeconds`):
    /// more than a provider lags behind its input, less than a device's audio retention.
    static let maxRediarizedSeconds = 60.0

    /// `rediarizesGap`: the session's provider diarizes on the server from audio the device sends (not
    /// `device`/`off`, not server-recognised words, which re-sent audio would recognise twice).
    init(request: StartRequest, conversationID: String, stored: StoredConversation?, merge: MergeConfig, rediarizesGap: Bool = false) {
        self.request = request
        self.conversationID = conversationID
        let sessionToken = String(UUID().uuidString.lowercased().prefix(8))
        self.sessionToken = sessionToken
        self.isResumed = stored != nil
        var merger = TranscriptMerger(config: merge)
        let speakers: SpeakerRegistry
        let audioOffsetSeconds: Double
        if let stored {
            merger.restore(words: stored.words, turns: stored.turns.map(\.turn))
            speakers = SpeakerRegistry(speakers: stored.speakers, keyLabels: stored.keyLabels)
            audioOffsetSeconds = request.audioOffsetSeconds ?? Self.resumeOffsetSeconds(
                storedAudioSeconds: stored.state.audioSeconds, turnEnds: stored.turns.map(\.turn.endSeconds), rediarizesGap: rediarizesGap)
        } else {
            speakers = SpeakerRegistry()
            audioOffsetSeconds = request.audioOffsetSeconds ?? 0
        }
        self.audioOffsetSeconds = audioOffsetSeconds
        let turnProviders = Dictionary((stored?.turns ?? []).map { ($0.turn.id, $0.provider) }, uniquingKeysWith: { _, last in last })
        labelling = Labelling(
            source: .live, scope: ProviderInstanceScope(provider: request.provider, instance: sessionToken, offsetSeconds: audioOffsetSeconds),
            merger: merger, speakers: speakers, turnProviders: turnProviders)
        conversation = ConversationState(
            id: conversationID, deviceID: request.deviceID, provider: request.provider,
            sampleRate: request.sampleRate, encoding: request.encoding.rawValue, language: request.language,
            // Stored for the record; a secret-like option (a key a client should not have sent) is not.
            optionsJSON: Self.storedOptions(request), status: .active,
            audioSeconds: max(audioOffsetSeconds, stored?.state.audioSeconds ?? 0)
        )
        savedAudioSeconds = audioOffsetSeconds
    }

    /// Where a resume asks the device to continue its audio. The stored audio end is what the server
    /// received; a provider diarizing on the server lags behind it (its window, a loaded machine), and
    /// after a crash the audio it had not yet turned into stored turns would otherwise never be
    /// diarized, leaving the words there without a speaker for good. So such a resume goes back to the
    /// end of the last stored turn (bounded by `maxRediarizedSeconds`): the new provider instance hears
    /// that audio again, knowing the stored voices, and its turns label those words. Audio after the
    /// last turn that was silence costs only its re-sending; turns it overlaps are merged as usual.
    static func resumeOffsetSeconds(storedAudioSeconds: Double, turnEnds: [Double], rediarizesGap: Bool) -> Double {
        guard rediarizesGap else { return storedAudioSeconds }
        let diarizedThrough = turnEnds.max() ?? 0
        return max(storedAudioSeconds - maxRediarizedSeconds, min(storedAudioSeconds, diarizedThrough), 0)
    }

    /// The start's options as stored with the conversation (redacted), plus `"asr": "server"` when the
    /// server recognised the words: the record of who made the transcript's words, without a column
    /// of its own. The key cannot clash with a provider option in practice: the bundled plugins refuse
    /// unknown keys, so a start carrying `asr` inside `options` is refused before anything is stored.
    static func storedOptions(_ request: StartRequest) -> String {
        let redacted = Redaction.options(request.optionsJSON)
        guard request.asr == .server else { return redacted }
        var object = (try? JSONSerialization.jsonObject(with: Data(redacted.utf8))) as? [String: Any] ?? [:]
        object["asr"] = ASRMode.server.rawValue
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return redacted }
        return String(decoding: data, as: UTF8.self)
    }

    /// End of the received audio on the conversation timeline.
    var audioEndSeconds: Double {
        audioOffsetSeconds + Double(inputSampleCount) / Double(request.sampleRate)
    }

    var currentConversation: ConversationState {
        var state = conversation
        state.audioSeconds = max(conversation.audioSeconds, audioEndSeconds)
        return state
    }

    var audioSecondsSinceSave: Double { audioEndSeconds - savedAudioSeconds }

    func markSaved() { savedAudioSeconds = audioEndSeconds }

    /// Seconds of audio this session received (not counting where the conversation stood before it).
    var sessionAudioSeconds: Double { audioEndSeconds - audioOffsetSeconds }

    /// Monotonic seconds since the session started, for the latency tracker.
    var nowSeconds: Double { (ContinuousClock.now - clockOrigin).seconds }

    /// What `stats` reports at finalize.
    /// Chunks' processing: each one's wall-clock time (what the device waits for, reported as chunk
    /// processing percentiles) and the CPU the provider spent on them (the real-time factor: CPU per
    /// second of audio, unaffected by other sessions or processes sharing the cores).
    func stats() -> SessionStats {
        let audio = sessionAudioSeconds
        let latencies = labelling.labelLatency.latencies()
        let merger = labelling.merger
        let chunkProcessingSeconds = labelling.chunkSeconds
        return SessionStats(
            audioSeconds: audio, wordCount: merger.words.count, unlabelledWordCount: merger.unlabelledWordCount,
            speakerCount: labelling.speakers.activeSpeakers.count,
            firstLabelLatenciesSeconds: latencies.first, finalLabelLatenciesSeconds: latencies.final,
            chunkProcessingSeconds: chunkProcessingSeconds,
            realTimeFactor: chunkProcessingSeconds.isEmpty || audio <= 0 ? nil : labelling.cpuSeconds / audio,
            liveTurns: liveTurns.segments.map { WireTurn(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) },
            finalTurns: merger.turns.sorted { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) }
                .map { WireTurn(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        )
    }

    var summaryMetadata: Logger.Metadata {
        let audio = sessionAudioSeconds
        return [
            "audio_seconds": "\(String(format: "%.1f", audio))",
            "words": "\(labelling.merger.words.count)",
            "unlabelled_words": "\(labelling.merger.unlabelledWordCount)",
            "speakers": "\(labelling.speakers.activeSpeakers.count)",
            "real_time_factor": "\(audio > 0 ? String(format: "%.4f", labelling.cpuSeconds / audio) : "-")",
        ]
    }
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
