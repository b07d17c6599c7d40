#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ProviderInterface
import Synchronization

/// One provider worker process as the server sees it: its pid, its socket, the instances and requests
/// it has in flight, and how it ended.
///
/// Replies arrive on the I/O loop's thread and are routed to their `RemoteProviderSession`s. When the
/// worker's socket closes (it died: any signal, abort, exit; or it was stopped), the process is reaped
/// on a separate queue and every session on it fails with what happened, at once.
final class WorkerProcess: @unchecked Sendable {
    let pid: pid_t
    let pluginPath: String
    private let connection: Mutex<WorkerConnection?> = Mutex(nil)
    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)
    private let memoryLimitBytes: UInt64?
    /// This process's peak resident memory just after the spawn (see `PeakResidentMemory`).
    private let spawnerPeakKilobytes: Int
    private let logger: Logger
    private let deadlines: ProviderDeadlines
    /// The server's provider configuration, from which the worker gets its own providers' sections.
    private let configuration: ProviderConfiguration?
    private let claims: ConfigurationClaims
    /// The worker's private temporary folder, removed once it has been reaped.
    private let temporary: WorkerTemporaryFolder?
    /// Called once, after the worker ended and was reaped, unless it was stopped on purpose.
    private let onCrash: @Sendable (WorkerProcess, PluginError) -> Void

    private struct State {
        var manifest: WorkerManifest?
        var sessions: [UInt64: RemoteProviderSession] = [:]
        var requests: [UInt64: PendingRequest] = [:]
        var nextRequest: UInt64 = 1
        /// Set when the server stops the worker: the watchdog's verdict, or nil for a deliberate stop.
        var stopReason: StopReason?
        /// Set once the worker is gone: what every later call fails with.
        var ended: PluginError?
        var startedAt = MonotonicClock.seconds
        /// The worker's own peak resident memory as last sampled by the watchdog, in kilobytes.
        var sampledPeakKilobytes = 0
    }

    private enum StopReason {
        case deliberate
        case killed(PluginError)
    }

    /// Sendable: `result` is written once, by the loop thread or the reaper, before `done` is
    /// signalled, and read only by the waiter after it.
    private final class PendingRequest: @unchecked Sendable {
        let call: ProviderCall
        let sentAt: Double
        let done = DispatchSemaphore(value: 0)
        var result: Result<[Float], PluginError>?
        init(call: ProviderCall, sentAt: Double) {
            self.call = call
            self.sentAt = sentAt
        }
    }

    /// Starts `executable provider-worker …` for `pluginPath` (on the loop's thread: see
    /// `WorkerIOLoop.runOnLoop`). Returns at once; `waitUntilReady` waits for the plugin to load.
    static func launch(
        executable: String, pluginPath: String, config: ProviderIsolationConfig, sandbox: ProviderSandboxSettings,
        claims: ConfigurationClaims, loop: WorkerIOLoop,
        logLevel: Logger.Level,
        logger: Logger, onCrash: @escaping @Sendable (WorkerProcess, PluginError) -> Void
    ) throws(PluginError) -> WorkerProcess {
        let sockets: (Int32, Int32)
        do {
            sockets = try Syscall.socketPair()
        } catch {
            throw PluginError(.providerUnavailable, "cannot create a socket for the provider worker: \(error)")
        }
        var sandbox = sandbox
        let temporary: WorkerTemporaryFolder?
        do {
            temporary = sandbox.enabled ? try WorkerTemporaryFolder(owner: sandbox.account) : nil
        } catch {
            Syscall.close(sockets.0)
            Syscall.close(sockets.1)
            throw PluginError(.providerUnavailable, "cannot make the provider worker's temporary folder: \(error)")
        }
        let environment = WorkerProcessEnvironment.curated(Syscall.currentEnvironment, temporaryFolder: temporary?.path)
        if sandbox.enabled {
            sandbox.landlock = LandlockRules(
                pluginPath: pluginPath, workerExecutable: executable,
                mappedFiles: (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? "",
                configSections: Array((config.providerConfiguration?.sections ?? [:]).values),
                // The variables the worker gets (`curated` below adds only TMPDIR, which names no model).
                environment: ProcessInfo.processInfo.environment.filter { WorkerProcessEnvironment.passes($0.key) },
                vendorFolders: LandlockRules.vendorFolders(executableFolder: (executable as NSString).deletingLastPathComponent,
                                                           currentFolder: FileManager.default.currentDirectoryPath),
                temporaryFolder: temporary?.path).rules
        }
        var workerConfig = ProviderWorkerConfig(
            pluginPath: pluginPath, parentPID: getpid(), protocolVersion: WorkerProtocol.version,
            memoryLimitBytes: config.memoryLimitBytes, niceIncrement: config.niceIncrement, logLevel: logLevel,
            receivesConfiguration: config.providerConfiguration != nil, sandbox: sandbox)
        workerConfig.reportsBacklog = config.reportsBacklog
        let arguments = workerConfig.arguments
        let pid: pid_t
        do {
            pid = try loop.runOnLoop {
                try Syscall.spawn(executable: executable, arguments: [executable, "provider-worker"] + arguments,
                                  environment: environment, childDescriptor: sockets.1)
            }
        } catch {
            Syscall.close(sockets.0)
            Syscall.close(sockets.1)
            temporary?.remove()
            throw PluginError(.providerUnavailable, "cannot start the provider worker \(executable): \(error)")
        }
        Syscall.close(sockets.1)
        let worker = WorkerProcess(pid: pid, pluginPath: pluginPath, memoryLimitBytes: config.memoryLimitBytes,
                                   spawnerPeakKilobytes: PeakResidentMemory.kilobytes() ?? 0,
                                   deadlines: config.deadlines, configuration: config.providerConfiguration, claims: claims, temporary: temporary,
                                   logger: logger, onCrash: onCrash)
        do {
            let connection = try WorkerConnection(
                descriptor: sockets.0, loop: loop,
                onReply: { [weak worker] reply in worker?.received(reply) },
                onClosed: { [weak worker] error in worker?.socketClosed(protocolError: error) })
            worker.connection.withLock { $0 = connection }
            loop.add(connection)
        } catch {
            Syscall.close(sockets.0)
            Syscall.kill(pid, SIGKILL)
            _ = try? Syscall.waitForExit(pid)
            throw PluginError(.providerUnavailable, "cannot use the provider worker's socket: \(error)")
        }
        return worker
    }

    private init(pid: pid_t, pluginPath: String, memoryLimitBytes: UInt64?, spawnerPeakKilobytes: Int, deadlines: ProviderDeadlines,
                 configuration: ProviderConfiguration?, claims: ConfigurationClaims, temporary: WorkerTemporaryFolder?,
                 logger: Logger, onCrash: @escaping @Sendable (WorkerProcess, PluginError) -> Void) {
        self.pid = pid
        self.configuration = configuration
        self.claims = claims
        self.temporary = temporary
        self.spawnerPeakKilobytes = spawnerPeakKilobytes
        self.pluginPath = pluginPath
        self.memoryLimitBytes = memoryLimitBytes
        self.deadlines = deadlines
        var logger = logger
        logger[metadataKey: "worker_pid"] = "\(pid)"
        logger[metadataKey: "plugin"] = "\(pluginPath)"
        self.logger = logger
        self.onCrash = onCrash
    }

    /// Waits until the worker has loaded its plugin and said what it offers; kills it after the load
    /// deadline. Throws what went wrong (the worker died loading, or hung).
    func waitUntilReady() throws(PluginError) -> WorkerManifest {
        let waited = ready.wait(timeout: .now() + deadlines.loadSeconds)
        if waited == .timedOut {
            kill(PluginError(.providerHung, "the provider worker for \(pluginPath) did not load the plugin within \(Int(deadlines.loadSeconds)) s; it was stopped"))
            _ = ready.wait(timeout: .now() + 10)
        }
        return try state.withLock { (state) throws(PluginError) -> WorkerManifest in
            if let manifest = state.manifest, state.ended == nil { return manifest }
            throw state.ended ?? PluginError(.providerUnavailable, "the provider worker for \(pluginPath) did not start")
        }
    }

    var manifest: WorkerManifest? { state.withLock { $0.manifest } }
    var hasEnded: Bool { state.withLock { $0.ended != nil } }
    var sessionCount: Int { state.withLock { $0.sessions.count } }

    // MARK: Sessions and requests

    /// Adds a session before its create frame goes out, so no reply can miss it.
    func register(_ session: RemoteProviderSession) throws(PluginError) {
        try state.withLock { (state) throws(PluginError) in
            if let ended = state.ended { throw ended }
            state.sessions[session.instanceID] = session
        }
    }

    func unregister(_ instanceID: UInt64) {
        _ = state.withLock { $0.sessions.removeValue(forKey: instanceID) }
    }

    func send(_ frame: [UInt8]) {
        connection.withLock { $0 }?.send(frame)
    }

    /// check_options in the worker; blocks until the answer (the watchdog bounds it).
    func checkOptions(providerID: String, optionsJSON: String) throws(PluginError) {
        _ = try request(.checkOptions) { .checkOptions(request: $0, providerID: providerID, optionsJSON: optionsJSON) }
    }

    /// embed_voice in the worker; blocks until the answer (the watchdog bounds it).
    func embedVoice(providerID: String, samples: [Float]) throws(PluginError) -> [Float] {
        try request(.embedVoice) { .embedVoice(request: $0, providerID: providerID, samples: samples) }
    }

    private func request(_ call: ProviderCall, _ make: (UInt64) -> WorkerRequest) throws(PluginError) -> [Float] {
        let pending = PendingRequest(call: call, sentAt: MonotonicClock.seconds)
        let id = try state.withLock { (state) throws(PluginError) -> UInt64 in
            if let ended = state.ended { throw ended }
            let id = state.nextRequest
            state.nextRequest += 1
            state.requests[id] = pending
            return id
        }
        send(make(id).encoded())
        pending.done.wait()
        return try pending.result!.get()
    }

    // MARK: Watchdog

    /// Kills the worker if any call it runs has overrun its deadline.
    func checkDeadlines(at now: Double) {
        let verdict: PluginError? = state.withLock { state in
            guard state.ended == nil, state.stopReason == nil else { return nil }
            for session in state.sessions.values {
                if let (call, running) = session.overdueCall(at: now, deadlines: deadlines) {
                    return PluginError(.providerHung, "provider \(session.providerID) hung: \(call.rawValue) of session \(session.sessionID) did not return within \(Self.seconds(deadlines.seconds(for: call))) (running \(Self.seconds(running))); its worker was stopped")
                }
            }
            for request in state.requests.values where now - request.sentAt > deadlines.seconds(for: request.call) {
                return PluginError(.providerHung, "a provider of \(pluginPath) hung: \(request.call.rawValue) did not return within \(Self.seconds(deadlines.seconds(for: request.call))); its worker was stopped")
            }
            return nil
        }
        if let verdict { kill(verdict) }
        // The worker's peak memory, for the crash report (one small /proc read per watchdog tick).
        if let peak = PeakResidentMemory.kilobytes(of: pid) {
            state.withLock { $0.sampledPeakKilobytes = max($0.sampledPeakKilobytes, peak) }
        }
    }

    private static func seconds(_ value: Double) -> String {
        value >= 10 ? "\(Int(value.rounded())) s" : String(format: "%.1f s", value)
    }

    // MARK: Ending

    /// Kills the worker; its sessions fail with `reason`.
    func kill(_ reason: PluginError) {
        let first = state.withLock { state -> Bool in
            guard state.stopReason == nil, state.ended == nil else { return false }
            state.stopReason = .killed(reason)
            return true
        }
        guard first else { return }
        logger.error("stopping a provider worker", metadata: ["reason": "\(reason.message)"])
        Syscall.kill(pid, SIGKILL)
    }

    /// Stops the worker on purpose (its session ended, or the server stops): no crash is reported.
    func stop() {
        state.withLock { state in
            if state.stopReason == nil { state.stopReason = .deliberate }
        }
        connection.withLock { $0 }?.close()   // the worker reads end of stream and exits at once
        reap(protocolError: nil)
    }

    /// Waits until the process has been reaped (at most `seconds`); true if it has.
    func waitUntilReaped(seconds: Double) -> Bool {
        guard reaped.wait(timeout: .now() + seconds) == .success else { return false }
        reaped.signal()
        return true
    }

    /// Loop thread: the worker's end of the socket closed. Reap it elsewhere (a core dump or a slow
    /// exit must not hold up the other workers' I/O), then fail everything it had.
    private func socketClosed(protocolError: WireError?) {
        if let protocolError {
            logger.error("a provider worker sent an unreadable frame", metadata: ["error": "\(protocolError)"])
        }
        reap(protocolError: protocolError)
    }

    /// Collects the process's exit status once (whoever sees the end first: the socket closing, or a
    /// deliberate stop), then ends everything it had.
    private func reap(protocolError: WireError?) {
        guard !reaping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.reaper.async { [self] in
            // The socket closes while the process exits, so it is normally reaped at once. One that
            // closed its socket (or was told to stop) and lives on is killed after a grace period.
            let grace = DispatchWorkItem { [pid] in Syscall.kill(pid, SIGKILL) }
            Self.graceTimer.asyncAfter(deadline: .now() + 2, execute: grace)
            let exit: WorkerExit
            do {
                let (status, usage) = try Syscall.waitForExit(pid)
                let peak = PeakResidentMemory.workerPeakKilobytes(
                    reported: usage.ru_maxrss, spawnerAfterSpawn: spawnerPeakKilobytes, sampled: state.withLock { $0.sampledPeakKilobytes })
                exit = WorkerExit(waitStatus: status, maxResidentKilobytes: peak, memoryLimitBytes: memoryLimitBytes)
            } catch {
                exit = WorkerExit(cause: .unknown)
            }
            grace.cancel()
            temporary?.remove()
            ended(exit, protocolError: protocolError)
            reaped.signal()
        }
    }

    private let reaping = Atomic<Bool>(false)
    private let reaped = DispatchSemaphore(value: 0)

    private func ended(_ exit: WorkerExit, protocolError: WireError?) {
        let (sessions, requests, stopReason, hadManifest) = state.withLock { state in
            let result = (Array(state.sessions.values), Array(state.requests.values), state.stopReason, state.manifest != nil)
            state.sessions.removeAll()
            state.requests.removeAll()
            return result
        }
        let providers = state.withLock { $0.manifest?.providers.map(\.descriptor.id) } ?? []
        let subject = providers.count == 1 ? "provider \(providers[0])" : "the provider worker for \(pluginPath)"
        let error: PluginError
        switch stopReason {
        case .killed(let reason):
            error = reason
        case .deliberate:
            error = PluginError(.providerUnavailable, "\(subject) was stopped")
        case nil:
            if let protocolError {
                error = PluginError(.providerCrashed, "\(subject) sent an unreadable frame (\(protocolError.message)) and was stopped: \(exit)")
            } else if !hadManifest {
                error = PluginError(.providerCrashed, "the provider worker for \(pluginPath) \(exit.verb) while loading the plugin: \(exit)")
            } else {
                error = PluginError(.providerCrashed, "\(subject) \(exit.verb): \(exit)")
            }
        }
        state.withLock { $0.ended = error }
        connection.withLock { $0 }?.close()
        for session in sessions {
            // Each session hears about its own provider (a plugin file may offer several).
            var own = error
            if providers.count != 1, stopReason == nil, hadManifest {
                own.message = "provider \(session.providerID) \(exit.verb): \(exit)"
            }
            session.workerEnded(own)
        }
        for request in requests {
            request.result = .failure(error)
            request.done.signal()
        }
        ready.signal()
        if case .deliberate = stopReason {
            logger.debug("provider worker stopped", metadata: ["exit": "\(exit)"])
            return
        }
        logger.error("provider worker ended", metadata: [
            "exit": "\(exit)", "sessions_failed": "\(sessions.count)", "reason": "\(error.message)",
        ])
        onCrash(self, error)
    }

    // MARK: Replies (loop thread)

    private func received(_ reply: WorkerReply) {
        switch reply {
        case .ready(let manifest):
            // The worker refuses a server of another build (its argument); the server refuses a worker
            // of another build too: the same executable on disk may have been replaced since start.
            guard manifest.protocolVersion == WorkerProtocol.version else {
                kill(PluginError(.providerUnavailable, "the provider worker for \(pluginPath) speaks worker protocol \(manifest.protocolVersion), "
                    + "the server \(WorkerProtocol.version): not the same build; it was stopped"))
                return
            }
            state.withLock { $0.manifest = manifest }
            ready.signal()
        case .created(let id), .createFailed(let id, _), .processed(let id, _, _, _, _), .finalized(let id, _, _, _),
             .instanceFailed(let id, _):
            let session = state.withLock { $0.sessions[id] }
            session?.received(reply)
        case .answered(let id, let result):
            guard let pending = state.withLock({ $0.requests.removeValue(forKey: id) }) else { return }
            pending.result = result
            pending.done.signal()
        case .configurationWanted(let ids):
            // The sections of the ids the plugin declares, and no other: never the whole file.
            let configured = configuration?.sections ?? [:]
            let (granted, refused) = claims.grant(ids.filter { configured[$0] != nil }, to: pluginPath)
            if !refused.isEmpty {
                logger.error("a plugin declares providers whose configuration another plugin file has; it does not get it",
                             metadata: ["providers": "\(refused)"])
            }
            let sections = configured.filter { granted.contains($0.key) }
            logger.debug("provider configuration sent to the worker", metadata: ["sections": "\(sections.keys.sorted())"])
            send(WorkerRequest.configure(sections: sections).encoded())
        case .log(let level, let message, let metadata):
            // The worker's own lines (its plugin registry's, the plugin's host->log) under the server's
            // logger, which already names the worker's pid and plugin.
            logger.log(level: WorkerLogHandler.level(level), "\(message)", metadata: metadata.mapValues { .string($0) })
        }
    }

    /// Reaps workers. Concurrent: a worker that takes its time to exit must not delay the report of
    /// another's crash.
    private static let reaper = DispatchQueue(label: "speakersync.worker-reaper", attributes: .concurrent)
    /// Kills workers that outstay their grace period.
    private static let graceTimer = DispatchQueue(label: "speakersync.worker-grace")
}

/// Seconds on a monotonic clock, for deadlines.
enum MonotonicClock {
    static var seconds: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
