import Foundation
import Logging
import ProviderInterface
import Synchronization

/// One plugin file's workers: the shared worker (all instances in `process` mode; enrolment and the
/// plugin's descriptors in both modes), the per-session workers of `session` mode, the crash history,
/// and the restarts.
///
/// After a crash the shared worker is started again in the background once the backoff has passed
/// (`CrashLoopTracker`); sessions that arrive meanwhile wait for it. A provider in a crash loop is held
/// back (sessions are refused with `provider_unavailable`) until it has been quiet for the quarantine.
final class WorkerSlot: @unchecked Sendable {
    let pluginPath: String
    private let condition = NSCondition()
    private let environment: WorkerEnvironment
    // Guarded by `condition`.
    private var shared: Shared
    private var tracker: CrashLoopTracker
    private var sessionWorkers: [ObjectIdentifier: WorkerProcess] = [:]
    private var stopped = false

    private enum Shared {
        /// The first worker, loading the plugin at server start.
        case loading(WorkerProcess)
        case running(WorkerProcess)
        /// Starting now (a background restart or a session's); waiters sleep on the condition.
        case starting
        /// Crashed; a restart is scheduled for `at` (monotonic seconds).
        case waitingToRestart(at: Double)
        /// Crash loop: nothing starts before `until` unless a session asks after it.
        case quarantined(until: Double)
        case stopped
    }

    /// Starts the first worker; `finishLoading` waits for it.
    init(pluginPath: String, environment: WorkerEnvironment) throws(PluginError) {
        self.pluginPath = pluginPath
        self.environment = environment
        shared = .stopped
        tracker = CrashLoopTracker(policy: environment.config.crashLoop)
        let worker = try environment.launch(pluginPath) { [weak self] worker, error in self?.crashed(worker, error) }
        shared = .loading(worker)
    }

    /// Waits for the first worker to load the plugin and returns what it offers; it then serves the
    /// slot's sessions. A slot whose first worker failed is not used (and its worker is stopped).
    func finishLoading() throws(PluginError) -> (worker: WorkerProcess, manifest: WorkerManifest) {
        condition.lock()
        guard case .loading(let worker) = shared else {
            condition.unlock()
            throw PluginError(.providerUnavailable, "the provider worker for \(pluginPath) is not loading")
        }
        condition.unlock()
        do {
            let manifest = try worker.waitUntilReady()
            condition.lock()
            shared = .running(worker)
            condition.unlock()
            return (worker, manifest)
        } catch {
            stop()
            worker.stop()
            throw error
        }
    }

    // MARK: Workers for sessions

    /// The shared worker, waiting up to the load deadline while it (re)starts.
    func sharedWorker() throws(PluginError) -> WorkerProcess {
        let deadline = Date(timeIntervalSinceNow: environment.config.deadlines.loadSeconds + environment.config.crashLoop.maximumBackoffSeconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = MonotonicClock.seconds
            switch shared {
            case .running(let worker) where !worker.hasEnded:
                return worker
            case .running, .starting, .waitingToRestart, .loading:
                break
            case .quarantined(let until):
                if now < until {
                    throw PluginError(.providerUnavailable, tracker.unavailableReason(at: now) ?? "the provider is held back after repeated crashes")
                }
                // Quiet long enough: try again, now, for this session.
                shared = .starting
                startInBackground(after: 0)
            case .stopped:
                throw PluginError(.providerUnavailable, "the server is stopping")
            }
            guard condition.wait(until: deadline) else {
                throw PluginError(.providerUnavailable, "the provider worker for \(pluginPath) is not back yet after a crash (\(tracker.lastReason ?? "no reason given"))")
            }
        }
    }

    /// A new worker for one session (`session` mode); stopped when the session closes.
    func dedicatedWorker() throws(PluginError) -> WorkerProcess {
        try refuseIfQuarantined()
        let worker = try environment.launch(pluginPath) { [weak self] worker, error in self?.crashed(worker, error) }
        condition.lock()
        sessionWorkers[ObjectIdentifier(worker)] = worker
        condition.unlock()
        do {
            _ = try worker.waitUntilReady()
        } catch {
            worker.stop()
            throw error
        }
        return worker
    }

    /// The session on a dedicated worker ended: stop the worker.
    func release(dedicated worker: WorkerProcess) {
        condition.lock()
        sessionWorkers[ObjectIdentifier(worker)] = nil
        condition.unlock()
        worker.stop()
    }

    private func refuseIfQuarantined() throws(PluginError) {
        condition.lock()
        defer { condition.unlock() }
        let now = MonotonicClock.seconds
        if let reason = tracker.unavailableReason(at: now) { throw PluginError(.providerUnavailable, reason) }
        if stopped { throw PluginError(.providerUnavailable, "the server is stopping") }
    }

    /// What `/v1/providers` says of this file's providers now.
    var status: ProviderStatus {
        condition.lock()
        defer { condition.unlock() }
        let now = MonotonicClock.seconds
        if let reason = tracker.unavailableReason(at: now), case .quarantined(let until) = shared {
            return .unavailable(reason: reason, retryAfterSeconds: max(0, until - now))
        }
        return .available
    }

    // MARK: Crashes and restarts

    private func crashed(_ worker: WorkerProcess, _ error: PluginError) {
        condition.lock()
        defer { condition.unlock() }
        sessionWorkers[ObjectIdentifier(worker)] = nil
        guard !stopped else { return }
        let now = MonotonicClock.seconds
        let quarantined = tracker.recordCrash(at: now, reason: error.message)
        let isShared: Bool
        if case .running(let current) = shared, current === worker { isShared = true } else { isShared = false }
        if quarantined {
            let until = tracker.quarantinedUntil ?? now
            environment.logger.error("provider held back after repeated crashes", metadata: [
                "plugin": "\(pluginPath)", "until_seconds": "\(Int(until - now))", "reason": "\(error.message)",
            ])
            if isShared || { if case .waitingToRestart = shared { return true } else { return false } }() {
                shared = .quarantined(until: until)
            }
        } else if isShared {
            let delay = tracker.restartDelay(at: now)
            shared = .waitingToRestart(at: now + delay)
            startInBackground(after: delay)
        }
        condition.broadcast()
    }

    /// Called with the lock held.
    private func startInBackground(after delay: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.restart() }
    }

    private func restart() {
        condition.lock()
        switch shared {
        case .waitingToRestart, .starting:
            shared = .starting
        case .running, .quarantined, .stopped, .loading:
            condition.unlock()
            return
        }
        condition.unlock()
        let result: Result<WorkerProcess, PluginError>
        do {
            let worker = try environment.launch(pluginPath) { [weak self] worker, error in self?.crashed(worker, error) }
            do {
                _ = try worker.waitUntilReady()
                result = .success(worker)
            } catch {
                worker.stop()
                result = .failure(error)
            }
        } catch {
            result = .failure(error)
        }
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else {
            if case .success(let worker) = result { worker.stop() }
            return
        }
        switch result {
        case .success(let worker):
            shared = .running(worker)
            environment.logger.info("provider worker restarted", metadata: ["plugin": "\(pluginPath)", "worker_pid": "\(worker.pid)"])
        case .failure(let error):
            // A worker that crashed while loading was counted by `crashed`; one that could not even be
            // spawned counts here. Either way, back off and try again (or stay held back).
            let now = MonotonicClock.seconds
            if case .providerUnavailable = error.code { tracker.recordCrash(at: now, reason: error.message) }
            if tracker.isQuarantined(at: now) {
                shared = .quarantined(until: tracker.quarantinedUntil ?? now)
            } else {
                let delay = max(tracker.restartDelay(at: now), environment.config.crashLoop.initialBackoffSeconds)
                shared = .waitingToRestart(at: now + delay)
                startInBackground(after: delay)
            }
        }
        condition.broadcast()
    }

    // MARK: Watchdog and shutdown

    var workers: [WorkerProcess] {
        condition.lock()
        defer { condition.unlock() }
        return workersLocked()
    }

    /// Stops every worker of the slot and waits (at most 2 s each) until they have been reaped.
    func stop() {
        condition.lock()
        stopped = true
        let all = workersLocked()
        shared = .stopped
        sessionWorkers.removeAll()
        condition.broadcast()
        condition.unlock()
        for worker in all { worker.stop() }
        for worker in all { _ = worker.waitUntilReaped(seconds: 2) }
    }

    private func workersLocked() -> [WorkerProcess] {
        var all = Array(sessionWorkers.values)
        switch shared {
        case .running(let worker), .loading(let worker): all.append(worker)
        case .starting, .waitingToRestart, .quarantined, .stopped: break
        }
        return all
    }
}

/// What slots need from their host to start workers.
struct WorkerEnvironment: Sendable {
    let config: ProviderIsolationConfig
    let executable: String
    let loop: WorkerIOLoop
    let logger: Logger
    let logLevel: Logger.Level
    /// What every worker is told about its sandbox (the account is resolved once, at start).
    let sandbox: ProviderSandboxSettings
    /// Which plugin file each provider config section went to.
    let claims = ConfigurationClaims()

    func launch(_ pluginPath: String, onCrash: @escaping @Sendable (WorkerProcess, PluginError) -> Void) throws(PluginError) -> WorkerProcess {
        try WorkerProcess.launch(executable: executable, pluginPath: pluginPath, config: config, sandbox: sandbox, claims: claims,
                                 loop: loop, logLevel: logLevel, logger: logger, onCrash: onCrash)
    }
}
