import Dispatch
import FLACCodec
import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import SpeakerSyncStore
import Synchronization
import TranscriptMerge

/// Re-diarization: a conversation's stored audio run through another provider as fast as it goes,
/// in the background, and stored as another labelling of the same words (`<provider>:rediarized`),
/// so providers can be compared on audio recorded before anyone thought to compare them.
///
/// The audio goes through the same provider host as live sessions (so, under process isolation, a
/// worker process) in 100 ms pushes, as a device's frames arrive; the turns are labelled and merged
/// with the stored words exactly as a live session's are. One job runs at a time (it takes a core
/// while it runs); others wait their turn.
final class DiarizationJobService: Sendable {
    private let jobs = Mutex<[String: DiarizationJob]>([:])
    private let order = Mutex<[String]>([])
    private let directory: any LabellingDirectory
    private let providers: any ProviderHost
    private let merge: MergeConfig
    private let logger: Logger
    /// Jobs run one after another on this queue; each job's provider events come on its own queue.
    private let runner = DispatchQueue(label: "speakersync.rediarization")
    static let maxKept = 50
    /// Most jobs waiting or running at once; more get 429.
    static let maxPending = 4
    /// Samples per push: a device's 100 ms frame at 16 kHz.
    static let pushSamples = 1_600
    /// Audio handed over ahead of the provider's answers (backpressure, as live sessions have).
    static let maxInFlightSamples = 10 * 16_000

    static func labellingName(provider: String) -> String { "\(provider):rediarized" }

    init(directory: any LabellingDirectory, providers: any ProviderHost, merge: MergeConfig, logger: Logger) {
        self.directory = directory
        self.providers = providers
        self.merge = merge
        self.logger = logger
    }

    func job(_ id: String) -> DiarizationJob? { jobs.withLock { $0[id] } }

    /// Newest first; `deviceID` limits them to one device's conversations.
    func list(deviceID: String?) -> [DiarizationJob] {
        let ids = order.withLock { $0 }
        return jobs.withLock { jobs in ids.reversed().compactMap { jobs[$0] }.filter { deviceID == nil || $0.deviceID == deviceID } }
    }

    /// Queues a job; checks what can be checked at once (the provider, the stored audio) so the
    /// caller hears of it now rather than from a failed job.
    func start(conversationID: String, deviceID: String, provider: String, optionsJSON: String) throws(APIError) -> DiarizationJob {
        guard let descriptor = providers.provider(id: provider) else {
            let known = providers.providers.map(\.id).joined(separator: ", ")
            throw APIError(status: 400, code: "unknown_provider", message: "unknown provider '\(provider)'; this server has: \(known)")
        }
        guard case .plugin = descriptor.kind else {
            throw APIError(status: 400, code: "invalid_parameter", message: "provider \(provider) does not diarize audio on the server")
        }
        if case .unavailable(let reason, _) = providers.status(of: provider) {
            throw APIError(status: 503, code: "provider_unavailable", message: "provider \(provider) is unavailable: \(reason)")
        }
        let hasAudio: Bool
        do {
            hasAudio = try directory.hasStoredAudio(conversationID: conversationID)
        } catch {
            throw APIError(status: 503, code: "storage_unavailable", message: "the stored audio cannot be read: \(error)")
        }
        guard hasAudio else {
            throw APIError(status: 409, code: "audio_not_stored",
                           message: "conversation \(conversationID) has no stored audio to re-diarize (start its sessions with \"store_audio\": true)")
        }
        let job = DiarizationJob(id: String(UUID().uuidString.lowercased().prefix(8)), conversationID: conversationID,
                                 deviceID: deviceID, provider: provider, optionsJSON: optionsJSON)
        let admitted = jobs.withLock { jobs -> Bool in
            guard jobs.values.filter({ !$0.isFinished }).count < Self.maxPending else { return false }
            jobs[job.id] = job
            return true
        }
        guard admitted else {
            throw APIError(status: 429, code: "diarization_busy", message: "\(Self.maxPending) re-diarizations are already waiting or running; retry later")
        }
        order.withLock { order in
            order.append(job.id)
            let finished = jobs.withLock { jobs in order.filter { jobs[$0]?.isFinished == true } }
            for id in finished.prefix(max(0, order.count - Self.maxKept)) {
                jobs.withLock { _ = $0.removeValue(forKey: id) }
                order.removeAll { $0 == id }
            }
        }
        runner.async { [self] in run(job.id) }
        return job
    }

    private func update(_ id: String, _ change: (inout DiarizationJob) -> Void) {
        jobs.withLock { jobs in if jobs[id] != nil { change(&jobs[id]!) } }
    }

    /// On `runner`: one job from its stored audio to its stored labelling.
    private func run(_ id: String) {
        guard let job = job(id) else { return }
        update(id) { $0.phase = .running }
        let began = ContinuousClock.now
        do {
            let labelling = try diarize(job) { progress in self.update(id) { $0.progress = progress } }
            try directory.saveLabelling(conversationID: job.conversationID, labelling.record)
            update(id) {
                $0.phase = .done
                $0.progress = 1
                $0.audioSeconds = labelling.audioSeconds
                $0.realTimeFactor = labelling.realTimeFactor
                $0.speakers = labelling.speakers
                $0.wallSeconds = (ContinuousClock.now - began).seconds
            }
            logger.info("conversation re-diarized", metadata: ["conversation_id": "\(job.conversationID)", "provider": "\(job.provider)",
                                                               "audio_seconds": "\(labelling.audioSeconds)"])
        } catch {
            update(id) {
                $0.phase = .failed
                $0.error = "\(error)"
                $0.wallSeconds = (ContinuousClock.now - began).seconds
            }
            logger.warning("re-diarization failed", metadata: ["conversation_id": "\(job.conversationID)", "provider": "\(job.provider)", "error": "\(error)"])
        }
    }

    struct Result {
        var record: LabellingRecord
        var audioSeconds: Double
        var realTimeFactor: Double?
        var speakers: Int
    }

    struct JobFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Blocking, on `runner`: stored audio → 16 kHz → the provider → turns → the words labelled.
    private func diarize(_ job: DiarizationJob, progress: @escaping (Double) -> Void) throws -> Result {
        let chunks = try directory.audioChunks(conversationID: job.conversationID)
        guard let audio = try StoredAudio.assemble(chunks, decode: { try FLACDecoder.decode($0.flac).samples }) else {
            throw JobFailure(description: "the stored audio is gone")
        }
        var pcm = audio.samples.map { Float($0) / 32_768 }
        if audio.sampleRate != 16_000 {
            var resampler = try StreamingResampler(inputRate: audio.sampleRate)
            pcm = resampler.process(pcm) + resampler.flush()
        }
        let words = try directory.words(conversationID: job.conversationID)

        // The provider's events arrive on `events`; pushes go from it too (the protocol's rule).
        let events = DispatchQueue(label: "speakersync.rediarization.events")
        let done = DispatchSemaphore(value: 0)
        let state = JobState(merge: merge, words: words, provider: job.provider)
        let session = try events.sync { () throws -> any ProviderSession in
            try providers.makeSession(
                ProviderSessionRequest(providerID: job.provider, sessionID: "rediarize-\(job.id)", sampleRate: 16_000, optionsJSON: job.optionsJSON),
                queue: events
            ) { event in
                state.apply(event)
                if state.isFinished { done.signal() }
            }
        }
        let pusher = Pusher(session: session, pcm: pcm, state: state, queue: events, progress: progress)
        events.async { pusher.pushMore() }
        done.wait()
        events.sync { session.close() }
        if let failure = state.failure { throw JobFailure(description: "the provider failed: \(failure)") }
        let audioSeconds = Double(audio.samples.count) / Double(audio.sampleRate)
        let stats = LabellingStats(
            audioSeconds: audioSeconds, wordCount: state.merger.words.count, unlabelledWordCount: state.merger.unlabelledWordCount,
            speakerCount: Set(state.merger.turns.map(\.speaker)).count, cpuSeconds: state.cpuSeconds, chunkSeconds: state.chunkSeconds,
            labelLatenciesSeconds: [])
        let record = state.merger.labellingRecord(name: job.labellingName, provider: job.provider, source: .rediarized,
                                                  isComplete: true, statsJSON: stats.json)
        return Result(record: record, audioSeconds: audioSeconds, realTimeFactor: stats.realTimeFactor, speakers: stats.speakerCount)
    }
}

/// Hands the audio to the provider as fast as it takes it, on the job's events queue: up to
/// `maxInFlightSamples` ahead of its answers, then again a moment later.
private final class Pusher: @unchecked Sendable {
    let session: any ProviderSession
    let pcm: [Float]
    let state: JobState
    let queue: DispatchQueue
    let progress: (Double) -> Void

    init(session: any ProviderSession, pcm: [Float], state: JobState, queue: DispatchQueue, progress: @escaping (Double) -> Void) {
        self.session = session
        self.pcm = pcm
        self.state = state
        self.queue = queue
        self.progress = progress
    }

    func pushMore() {
        guard !state.isFinished else { return }
        while state.pushed < pcm.count, session.pendingSampleCount < DiarizationJobService.maxInFlightSamples {
            let end = min(pcm.count, state.pushed + DiarizationJobService.pushSamples)
            session.push(samples: Array(pcm[state.pushed..<end]))
            state.pushed = end
        }
        progress(pcm.isEmpty ? 1 : Double(state.pushed) / Double(pcm.count))
        if state.pushed >= pcm.count {
            session.finalize()
        } else {
            queue.asyncAfter(deadline: .now() + .milliseconds(5)) { self.pushMore() }
        }
    }
}

/// One job's provider output, confined to its events queue (and read by the runner once finished).
private final class JobState: @unchecked Sendable {
    var merger: TranscriptMerger
    var speakers = SpeakerRegistry()
    let provider: String
    var pushed = 0
    var cpuSeconds = 0.0
    var chunkSeconds: [Double] = []
    var failure: String?
    private(set) var isFinished = false

    init(merge: MergeConfig, words: [LabelledWord], provider: String) {
        merger = .labelling(words, config: merge)
        self.provider = provider
    }

    /// Turns mapped to labels and merged as a live session does (the same ids, keys and order).
    func apply(_ event: ProviderEvent) {
        switch event {
        case .processed(let chunk):
            cpuSeconds += chunk.cpuSeconds
            chunkSeconds += chunk.chunkWallSeconds
            merge(chunk.turns)
        case .finalized(let result):
            cpuSeconds += result.cpuSeconds
            merge(result.turns)
            isFinished = true
        case .failed(let error):
            failure = "\(error)"
            isFinished = true
        }
    }

    private func merge(_ turns: [ProviderTurn]) {
        _ = merger.mergeProviderTurns(turns, provider: provider, idPrefix: "\(provider):rediarized", keyPrefix: "", speakers: &speakers)
    }
}
