import Dispatch
import Foundation
import Logging
import PluginHost
import PostgresClient
import SpeakerSyncStore
import Synchronization
import TranscriptMerge

/// Re-diarization: a conversation's stored audio run through another provider as fast as it goes,
/// in the background, and stored as another labelling of the same words (`<provider>:rediarized`),
/// so providers can be compared on audio recorded before anyone thought to compare them.
///
/// Jobs live in PostgreSQL (`JobQueue`), not in this server: a job answered 202 is run by whichever
/// server claims it, and one cut off by a stop is run again (it is idempotent: its labelling replaces
/// the stored one whole) until it has used `JobQueue.maxAttempts` runs. Each server runs one job at a
/// time on a thread of its own (a job takes a core while it runs); four may wait, server-wide.
final class DiarizationJobService: Sendable {
    private let queue: JobQueue
    private let directory: any LabellingDirectory
    private let providers: any ProviderHost
    private let merge: MergeConfig
    private let logger: Logger
    private let control = Mutex(Control())
    /// Signalled when a job is queued here or the service stops: the runner looks at once.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the runner thread when it has stopped.
    private let runnerStopped = DispatchSemaphore(value: 0)

    private struct Control {
        var started = false
        var stopping = false
        /// The run in progress on this server, to stop it at shutdown.
        var current: JobCancellation?
    }

    /// Most jobs waiting or running at once on all servers; more get 429.
    static let maxPending = 4
    /// The newest jobs `GET /v1/diarization-jobs` lists.
    static let listLimit = 50
    /// How often the runner looks for jobs queued by other servers (its own wake it at once).
    static let pollSeconds = 1.0
    /// How often the runner recovers jobs of servers that died while this one runs.
    static let recoverySeconds = 10.0
    /// Progress is written when it changed, at most every `RediarizationRun.tick`; a sign of life at
    /// least this often even when it did not (a provider finalizing).
    static let heartbeatSeconds = 5.0

    init(queue: JobQueue, directory: any LabellingDirectory, providers: any ProviderHost, merge: MergeConfig, logger: Logger) {
        self.queue = queue
        self.directory = directory
        self.providers = providers
        self.merge = merge
        self.logger = logger
    }

    // MARK: Reading

    /// The job; with `deviceID`, only that device's (another device's is nil, as a missing one).
    func job(_ id: String, deviceID: String?) throws -> DiarizationJob? {
        try queue.job(id: id, kind: .rediarization, deviceID: deviceID).map(DiarizationJob.init(record:))
    }

    /// Newest first; `deviceID` limits them to one device's conversations.
    func list(deviceID: String?) throws -> [DiarizationJob] {
        try queue.jobs(kind: .rediarization, deviceID: deviceID, limit: Self.listLimit).map(DiarizationJob.init(record:))
    }

    // MARK: Queueing

    /// Queues a job; checks what can be checked at once (the provider, the stored audio) so the
    /// caller hears of it now rather than from a failed job.
    /// `perDeviceLimit`: the device's share (`JobShareConfig`); nil for the admin's requests.
    func start(conversationID: String, deviceID: String, provider: String, optionsJSON: String,
               perDeviceLimit: Int? = nil) throws(APIError) -> DiarizationJob {
        guard !control.withLock({ $0.stopping }) else {
            throw APIError(status: 503, code: "server_stopping", message: "the server is stopping; retry on another or once it is back")
        }
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
            throw storageUnavailable(error, doing: "the stored audio cannot be read")
        }
        guard hasAudio else {
            throw APIError(status: 409, code: "audio_not_stored",
                           message: "conversation \(conversationID) has no stored audio to re-diarize (start its sessions with \"store_audio\": true)")
        }
        let new = JobRecord(id: JobIDs.make(), kind: .rediarization, deviceID: deviceID, conversationID: conversationID,
                            provider: provider, requestJSON: optionsJSON)
        let admission: JobQueue.Admission
        do {
            admission = try queue.admit(new, limit: Self.maxPending, perDeviceLimit: perDeviceLimit)
        } catch {
            throw storageUnavailable(error, doing: "the job cannot be queued")
        }
        let queued: JobRecord
        switch admission {
        case .added(let record): queued = record
        case .full:
            throw APIError(status: 429, code: "diarization_busy", message: "\(Self.maxPending) re-diarizations are already waiting or running; retry later")
        case .deviceShareUsed:
            throw APIError(status: 429, code: "device_share_used",
                           message: "device \(deviceID) already has \(perDeviceLimit ?? 0) re-diarization(s) waiting or running (its share, serve --max-jobs-per-device); retry when one is done")
        }
        wake.signal()
        return DiarizationJob(record: queued)
    }

    private func storageUnavailable(_ error: any Error, doing what: String) -> APIError {
        logger.warning("re-diarization: storage failed", metadata: ["what": "\(what)", "error": "\(error)"])
        return APIError(status: 503, code: "storage_unavailable", message: "\(what); retry later")
    }

    // MARK: Running

    /// Starts the runner thread (once).
    func startRunning() {
        let first = control.withLock { control -> Bool in
            guard !control.started, !control.stopping else { return false }
            control.started = true
            return true
        }
        guard first else { return }
        let thread = Thread { [self] in runLoop() }
        thread.name = "speakersync.rediarization"
        thread.start()
    }

    /// Claims and runs jobs until the service stops; now and then recovers jobs of servers that died.
    private func runLoop() {
        var lastRecovery: ContinuousClock.Instant?
        while !control.withLock({ $0.stopping }) {
            if lastRecovery.map({ (ContinuousClock.now - $0).seconds >= Self.recoverySeconds }) ?? true {
                lastRecovery = .now
                recover()
            }
            let claimed: JobRecord?
            do {
                claimed = try queue.claim(kind: .rediarization)
            } catch {
                logger.warning("re-diarization: cannot claim a job; retrying", metadata: ["error": "\(error)"])
                claimed = nil
            }
            if let claimed {
                run(DiarizationJob(record: claimed))
            } else {
                _ = wake.wait(timeout: .now() + Self.pollSeconds)
            }
        }
        runnerStopped.signal()
    }

    /// Between jobs: jobs of servers that died, and this server's own claims whose answer was lost
    /// with a broken connection (this server runs nothing now, so any job still marked running here is one).
    private func recover() {
        do {
            try queue.recoverOrphans()
            let strays = try queue.requeueRunning(kind: .rediarization)
            if !strays.isEmpty { logger.warning("re-diarization jobs claimed but never run here are queued again", metadata: ["jobs": "\(strays)"]) }
        } catch {
            logger.warning("re-diarization: job recovery failed; retrying later", metadata: ["error": "\(error)"])
        }
    }

    /// On the runner thread: one claimed job from its stored audio to its stored labelling.
    private func run(_ job: DiarizationJob) {
        var logger = self.logger
        logger[metadataKey: "job"] = "\(job.id)"
        logger[metadataKey: "conversation_id"] = "\(job.conversationID)"
        logger[metadataKey: "provider"] = "\(job.provider)"
        let cancellation = JobCancellation()
        let stopping = control.withLock { control -> Bool in
            control.current = cancellation
            return control.stopping
        }
        defer { control.withLock { $0.current = nil } }
        // Claimed as the stop began: shutdown puts it back.
        if stopping { return }
        let began = ContinuousClock.now
        let run = RediarizationRun(jobID: job.id, conversationID: job.conversationID, provider: job.provider, optionsJSON: job.optionsJSON,
                                   directory: directory, providers: providers, merge: merge, cancellation: cancellation)
        var written = (progress: -1.0, at: began)
        do {
            let outcome = try run.run { progress in
                guard progress != written.progress || (ContinuousClock.now - written.at).seconds >= Self.heartbeatSeconds else { return true }
                do {
                    guard try queue.heartbeat(id: job.id, progress: progress) else {
                        logger.warning("re-diarization job is no longer this server's (recovered elsewhere or deleted); stopping it")
                        return false
                    }
                    written = (progress, .now)
                } catch {
                    logger.warning("re-diarization progress not written", metadata: ["error": "\(error)"])
                }
                return true
            }
            try directory.saveLabelling(conversationID: job.conversationID, outcome.record)
            let figures = DiarizationJob.Figures(audioSeconds: outcome.audioSeconds, realTimeFactor: outcome.realTimeFactor,
                                                 speakers: outcome.speakers, wallSeconds: (ContinuousClock.now - began).seconds)
            if try !queue.finish(id: job.id, resultJSON: figures.json) {
                logger.warning("re-diarization finished after its job was taken back; the labelling is stored all the same")
            }
            logger.info("conversation re-diarized", metadata: ["audio_seconds": "\(outcome.audioSeconds)"])
        } catch let failure as RediarizationFailure where failure.code == .cancelled {
            logger.info("re-diarization stopped before it finished; the job is left to whoever stopped it")
        } catch {
            logger.warning("re-diarization failed", metadata: ["error": "\(error)"])
            let figures = DiarizationJob.Figures(wallSeconds: (ContinuousClock.now - began).seconds)
            do {
                try queue.finish(id: job.id, failureReason: Self.clientReason(error), resultJSON: figures.json)
            } catch {
                // Left running here: `recover` queues it again once the store answers.
                logger.warning("re-diarization failure not written; it will be queued again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A failure as a job's reason, which its device reads: a provider's or the job's own words, but
    /// no database error text (SQLSTATE, connection strings, socket paths stay in the log).
    static func clientReason(_ error: any Error) -> String {
        if error is PGError || error is StoreError { return "the database was unavailable" }
        return "\(error)"
    }

    /// Stops taking jobs, stops the one running here and puts it back in the queue (with its attempt
    /// given back: the stop was not its fault) for this or another server to run. Call before the
    /// providers and the store stop. Idempotent.
    func shutdown() {
        let (wasStarted, current) = control.withLock { control -> (Bool, JobCancellation?) in
            let first = !control.stopping
            control.stopping = true
            return (first && control.started, first ? control.current : nil)
        }
        current?.cancel()
        wake.signal()
        if wasStarted, runnerStopped.wait(timeout: .now() + 10) == .timedOut {
            logger.warning("re-diarization runner still busy at shutdown; its job is queued again regardless")
        }
        do {
            let requeued = try queue.requeueRunning(kind: .rediarization)
            if !requeued.isEmpty { logger.info("re-diarization jobs queued again for the next server", metadata: ["jobs": "\(requeued)"]) }
        } catch {
            logger.warning("re-diarization jobs not put back at shutdown; the next server to start recovers them", metadata: ["error": "\(error)"])
        }
    }
}

/// Job ids: 16 hex digits (64 random bits), short enough for a URL and for the console to show.
enum JobIDs {
    static func make() -> String {
        String(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16))
    }
}
