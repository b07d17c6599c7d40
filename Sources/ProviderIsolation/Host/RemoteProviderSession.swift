import Dispatch
import ProviderInterface
import Synchronization

/// A session's provider instance inside a worker process. `push` and `finalize` write a frame and
/// return; the worker's answers come back as events on the session's queue, in order. The calls in
/// flight are kept in a `CallLedger` so the watchdog can tell a hung call from a queued one.
final class RemoteProviderSession: ProviderSession, @unchecked Sendable {
    let providerID: String
    let sessionID: String
    let instanceID: UInt64
    private let worker: WorkerProcess
    private let queue: DispatchQueue
    private let events: @Sendable (ProviderEvent) -> Void
    private let state = Mutex(State())
    /// Called once when the session closes (session isolation stops its worker then).
    private let onClose: @Sendable () -> Void

    private struct State {
        var ledger = CallLedger()
        var phase = Phase.starting
        /// Answers of pushes without turns not reported yet.
        var quiet: ProviderChunkResult?
    }

    /// Pushes without turns are reported together once this many have accumulated (a second of 100 ms
    /// chunks), or with the next push that has turns, or before the final result.
    static let quietPushesPerReport = 10
    private let coalesces: Bool

    private enum Phase {
        /// Not started yet (options being checked).
        case starting
        case open
        /// The provider failed; the failure event is on its way.
        case failed
        /// Closed by the session: nothing more is delivered.
        case closed
    }

    init(providerID: String, sessionID: String, instanceID: UInt64, worker: WorkerProcess, queue: DispatchQueue,
         coalescesQuietPushes: Bool = true,
         events: @escaping @Sendable (ProviderEvent) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.coalesces = coalescesQuietPushes
        self.providerID = providerID
        self.sessionID = sessionID
        self.instanceID = instanceID
        self.worker = worker
        self.queue = queue
        self.events = events
        self.onClose = onClose
    }

    /// Asks the worker whether the options are acceptable (waiting for the answer: a refusal is the
    /// client's mistake, reported before the session starts), then sends the create frame without
    /// waiting for it: the session's first chunks follow it at once and the worker runs them once the
    /// instance exists, so a provider that is slow to start (a model to load, many sessions starting at
    /// once) never holds up the session's words. A create that fails arrives later as `.failed`.
    func start(_ request: ProviderSessionRequest) throws(PluginError) {
        try worker.checkOptions(providerID: request.providerID, optionsJSON: request.optionsJSON)
        try worker.register(self)
        state.withLock { state in
            state.ledger.sent(.create, at: MonotonicClock.seconds)
            state.phase = .open
        }
        worker.send(WorkerRequest.create(.init(
            instance: instanceID, providerID: request.providerID, sessionID: request.sessionID, sampleRate: request.sampleRate,
            optionsJSON: request.optionsJSON, knownSpeakers: request.knownSpeakers)).encoded())
    }

    var pendingSampleCount: Int { state.withLock { $0.ledger.pendingSampleCount } }

    func push(samples: [Float]) {
        let now = MonotonicClock.seconds
        let open = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.ledger.sent(.push, at: now, sampleCount: samples.count)
            return true
        }
        guard open else { return }
        worker.send(samples.withUnsafeBufferPointer { WorkerRequest.pushFrame(instance: instanceID, samples: $0, arrivedSeconds: now) })
    }

    func finalize() {
        let open = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.ledger.sent(.finalize, at: MonotonicClock.seconds)
            return true
        }
        guard open else { return }
        worker.send(WorkerRequest.finalize(instance: instanceID).encoded())
    }

    func close() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state.phase = .closed }
            state.ledger.abandon()
            return state.phase == .open || state.phase == .failed
        }
        worker.unregister(instanceID)
        guard wasOpen else { return }
        worker.send(WorkerRequest.destroy(instance: instanceID).encoded())
        onClose()
    }

    /// The oldest call in flight, if it overran its deadline (watchdog, any thread).
    func overdueCall(at now: Double, deadlines: ProviderDeadlines) -> (call: ProviderCall, runningSeconds: Double)? {
        state.withLock { $0.ledger.overdue(at: now, deadlines: deadlines) }
    }

    // MARK: From the worker (I/O loop thread, or the reaper for `workerEnded`)

    func received(_ reply: WorkerReply) {
        let now = MonotonicClock.seconds
        switch reply {
        case .created:
            state.withLock { state in _ = state.ledger.answered(at: now) }
        case .createFailed(_, let error):
            worker.send(WorkerRequest.destroy(instance: instanceID).encoded())
            fail(error)
        case .processed(_, let sampleCount, let cpuSeconds, let turns, let profiles):
            let report = state.withLock { state -> ProviderChunkResult? in
                guard state.phase == .open, let entry = state.ledger.answered(at: now) else { return nil }
                var result = state.quiet ?? ProviderChunkResult(turns: [], sampleCount: 0, chunkWallSeconds: [], cpuSeconds: 0)
                result.append(ProviderChunkResult(turns: turns, sampleCount: sampleCount, chunkWallSeconds: [now - entry.sentAt],
                                                  cpuSeconds: cpuSeconds, profiles: profiles))
                guard !coalesces || !turns.isEmpty || !profiles.isEmpty || result.chunkWallSeconds.count >= Self.quietPushesPerReport else {
                    state.quiet = result
                    return nil
                }
                state.quiet = nil
                return result
            }
            if let report { deliver(.processed(report)) }
        case .finalized(_, let cpuSeconds, let turns, let profiles):
            let quiet = state.withLock { state -> ProviderChunkResult?? in
                guard state.phase == .open, state.ledger.answered(at: now) != nil else { return nil }
                defer { state.quiet = nil }
                return .some(state.quiet)
            }
            guard let quiet else { return }
            if let quiet { deliver(.processed(quiet)) }
            deliver(.finalized(ProviderFinalResult(turns: turns, profiles: profiles, cpuSeconds: cpuSeconds)))
        case .instanceFailed(_, let error):
            fail(error)
        case .ready, .answered, .log, .configurationWanted:
            break
        }
    }

    /// The worker is gone: the session fails with what happened to it.
    func workerEnded(_ error: PluginError) {
        fail(error)
    }

    private func fail(_ error: PluginError) {
        let wasOpen = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.phase = .failed
            state.ledger.abandon()
            return true
        }
        if wasOpen { deliver(.failed(error)) }
    }

    /// Runs the event on the session's queue unless the session was closed before it got there.
    private func deliver(_ event: ProviderEvent) {
        queue.async { [self] in
            guard state.withLock({ $0.phase != .closed }) else { return }
            events(event)
        }
    }
}
