import Dispatch
import FLACCodec
import Foundation
import PluginHost
import SpeakerSyncAudio
import SpeakerSyncStore
import Synchronization
import TranscriptMerge

/// Why a re-diarization run ended without a labelling.
struct RediarizationFailure: Error, CustomStringConvertible {
    enum Code: String, Sendable {
        /// The conversation's audio was deleted after the job was queued.
        case audioGone = "audio_gone"
        case providerFailed = "provider_failed"
        /// Stopped from outside (server shutdown, or the job was no longer this server's): nothing is
        /// written, whoever stopped it decides what becomes of the job.
        case cancelled
    }

    var code: Code
    var message: String
    /// What the job's `error` says.
    var description: String { message }
}

/// A flag a job's runner checks between waits; set from another thread to stop the run.
final class JobCancellation: Sendable {
    private let flag = Mutex(false)
    var isCancelled: Bool { flag.withLock { $0 } }
    func cancel() { flag.withLock { $0 = true } }
}

/// One re-diarization: stored audio → 16 kHz → the provider (in 100 ms pushes, as fast as it takes
/// them) → its turns labelled and merged with the stored words as a live session does. Blocking, on
/// the job runner's thread; the provider's events come on a queue of the run's own.
struct RediarizationRun {
    struct Outcome {
        var record: LabellingRecord
        var audioSeconds: Double
        var realTimeFactor: Double?
        var speakers: Int
    }

    let jobID: String
    let conversationID: String
    let provider: String
    let optionsJSON: String
    let directory: any LabellingDirectory
    let providers: any ProviderHost
    let merge: MergeConfig
    let cancellation: JobCancellation
    /// How often `heartbeat` is called while the provider works.
    static let tick = DispatchTimeInterval.milliseconds(500)

    /// `heartbeat(progress)` is called every `tick` on this thread (progress: share of the audio handed
    /// over); returning false stops the run as a cancellation does.
    func run(heartbeat: (Double) -> Bool) throws -> Outcome {
        let chunks = try directory.audioChunks(conversationID: conversationID)
        guard let audio = try StoredAudio.assemble(chunks, decode: { try FLACDecoder.decode($0.flac).samples }) else {
            throw RediarizationFailure(code: .audioGone, message: "the stored audio is gone")
        }
        var pcm = audio.samples.map { Float($0) / 32_768 }
        if audio.sampleRate != 16_000 {
            var resampler = try StreamingResampler(inputRate: audio.sampleRate)
            pcm = resampler.process(pcm) + resampler.flush()
        }
        let words = try directory.words(conversationID: conversationID)
        if cancellation.isCancelled { throw RediarizationFailure(code: .cancelled, message: "stopped") }

        // The provider's events arrive on `events`; pushes go from it too (the protocol's rule).
        let events = DispatchQueue(label: "speakersync.rediarization.events")
        let done = DispatchSemaphore(value: 0)
        let labelling = DiarizationJob.labellingName(provider: provider)
        let state = JobState(merge: merge, words: words, provider: provider)
        let session = try events.sync { () throws -> any ProviderSession in
            try providers.makeSession(
                ProviderSessionRequest(providerID: provider, sessionID: "rediarize-\(jobID)", sampleRate: 16_000, optionsJSON: optionsJSON),
                queue: events
            ) { event in
                state.apply(event)
                if state.isFinished { done.signal() }
            }
        }
        let pusher = Pusher(session: session, pcm: pcm, state: state, queue: events)
        events.async { pusher.pushMore() }
        var stopped = false
        while done.wait(timeout: .now() + Self.tick) == .timedOut {
            if cancellation.isCancelled || !heartbeat(pusher.progress) {
                stopped = true
                break
            }
        }
        events.sync {
            state.stop()
            session.close()
        }
        if stopped { throw RediarizationFailure(code: .cancelled, message: "stopped") }
        if let failure = state.failure { throw RediarizationFailure(code: .providerFailed, message: "the provider failed: \(failure)") }
        let audioSeconds = Double(audio.samples.count) / Double(audio.sampleRate)
        // As a session's end does: the words no final turn reaches take the nearest turn's speaker.
        state.labelling.merger.labelStrandedWords(audioEndSeconds: audioSeconds)
        let stats = state.labelling.stats(audioSeconds: audioSeconds)
        let record = state.labelling.record(name: labelling, audioSeconds: audioSeconds, interruptedReason: nil)
        return Outcome(record: record, audioSeconds: audioSeconds, realTimeFactor: stats.realTimeFactor, speakers: stats.speakerCount)
    }
}

/// Hands the audio to the provider as fast as it takes it, on the job's events queue: up to
/// `maxInFlightSamples` ahead of its answers, then again a moment later.
private final class Pusher: @unchecked Sendable { // everything but `handedOver` is touched only on `queue`
    static let pushSamples = 1_600 // a device's 100 ms frame at 16 kHz
    static let maxInFlightSamples = 10 * 16_000 // audio handed over ahead of the answers (backpressure, as live sessions have)
    let session: any ProviderSession
    let pcm: [Float]
    let state: JobState
    let queue: DispatchQueue
    /// Share of the audio handed over, read by the runner's thread.
    private let handedOver = Mutex(0.0)

    init(session: any ProviderSession, pcm: [Float], state: JobState, queue: DispatchQueue) {
        self.session = session
        self.pcm = pcm
        self.state = state
        self.queue = queue
    }

    var progress: Double { handedOver.withLock { $0 } }

    func pushMore() {
        guard !state.isFinished else { return }
        while state.pushed < pcm.count, session.pendingSampleCount < Self.maxInFlightSamples {
            let end = min(pcm.count, state.pushed + Self.pushSamples)
            session.push(samples: Array(pcm[state.pushed..<end]))
            state.pushed = end
        }
        let share = pcm.isEmpty ? 1 : Double(state.pushed) / Double(pcm.count)
        handedOver.withLock { $0 = share }
        if state.pushed >= pcm.count {
            session.finalize()
        } else {
            queue.asyncAfter(deadline: .now() + .milliseconds(5)) { self.pushMore() }
        }
    }
}

/// One job's provider output, confined to its events queue (and read by the runner once finished).
private final class JobState: @unchecked Sendable { // confined to the events queue; the runner reads it after `events.sync`
    /// Turns mapped to labels and merged as a live session's are (the same ids, keys and order).
    var labelling: Labelling
    var pushed = 0
    var failure: String?
    private(set) var isFinished = false

    init(merge: MergeConfig, words: [LabelledWord], provider: String) {
        labelling = Labelling(source: .rediarized, scope: ProviderInstanceScope(provider: provider, instance: "rediarized", offsetSeconds: 0),
                              words: words, restored: nil, merge: merge)
    }

    func apply(_ event: ProviderEvent) {
        switch event {
        case .processed(let chunk):
            labelling.recordProcessing(chunkWallSeconds: chunk.chunkWallSeconds, cpuSeconds: chunk.cpuSeconds)
            _ = labelling.apply(chunk.turns)
        case .finalized(let result):
            labelling.recordProcessing(cpuSeconds: result.cpuSeconds)
            _ = labelling.apply(result.turns)
            isFinished = true
        case .failed(let error):
            failure = "\(error)"
            isFinished = true
        }
    }

    /// No more pushes (the run stopped or ended).
    func stop() { isFinished = true }
}
