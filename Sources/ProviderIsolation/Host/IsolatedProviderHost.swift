import Foundation
import Logging
// PluginHost only for `PluginRegistry.libraryPaths`: the folder is listed the same way in process and
// in workers. Everything else here is ProviderInterface.
import PluginHost
import Synchronization

/// The server's provider host with process isolation: every plugin file is loaded in a worker process
/// (`speakersync provider-worker`), never in the server. A provider that crashes, hangs past its
/// watchdog deadline or exhausts its memory limit fails its own sessions with `provider_crashed` /
/// `provider_hung`; the server and every other provider's sessions go on.
///
/// At start one worker per plugin file loads it and reports its providers; they are listed in file
/// order after the built-ins, the first of two providers with the same id winning, exactly as
/// `PluginRegistry` does in process. In `process` mode that worker then runs all the file's instances;
/// in `session` mode each session gets a worker of its own.
public final class IsolatedProviderHost: ProviderHost, @unchecked Sendable {
    public let providers: [ProviderDescriptor]
    public let failures: [PluginLoadFailure]
    public let config: ProviderIsolationConfig
    private let slots: [WorkerSlot]
    private let slotByProvider: [String: WorkerSlot]
    private let embedders: Set<String>
    private let loop: WorkerIOLoop
    private let logger: Logger
    private let nextInstance = Atomic<UInt64>(1)
    private let watchdog: any DispatchSourceTimer
    private let stopped = Atomic<Bool>(false)

    /// Starts a worker for every plugin file in `directory` and waits until each has loaded (or
    /// failed to: a failure is listed, as in process). Throws only when no worker can be started at
    /// all (the worker executable is missing).
    public init(directory: String?, config: ProviderIsolationConfig, logger: Logger) throws(PluginError) {
        precondition(config.mode != .none, "IsolatedProviderHost runs providers in workers; use PluginRegistry for none")
        self.config = config
        self.logger = logger
        let executable = try Self.workerExecutable(config.workerExecutable)
        do {
            loop = try WorkerIOLoop()
        } catch {
            throw PluginError(.providerUnavailable, "cannot start the provider worker I/O thread: \(error)")
        }
        let environment = WorkerEnvironment(config: config, executable: executable, loop: loop, logger: logger,
                                            logLevel: logger.logLevel, sandbox: SandboxAccount.settings(config.sandbox, logger: logger))
        var failures: [PluginLoadFailure] = []
        let paths = PluginRegistry.libraryPaths(in: directory, logger: logger, failures: &failures)

        // Start every file's worker at once (each reads its own models), then collect them in file order.
        let loading = paths.map { path in
            (path, Result { () throws(PluginError) in try WorkerSlot(pluginPath: path, environment: environment) })
        }
        var providers = ProviderDescriptor.builtins
        var taken = Set(providers.map(\.id))
        var slots: [WorkerSlot] = []
        var slotByProvider: [String: WorkerSlot] = [:]
        var embedders: Set<String> = []
        for (path, started) in loading {
            let slot: WorkerSlot
            let loaded: (worker: WorkerProcess, manifest: WorkerManifest)
            do {
                slot = try started.get()
                loaded = try slot.finishLoading()
            } catch {
                failures.append(PluginLoadFailure(path: path, code: .workerFailed, message: error.message))
                logger.error("plugin rejected: \(path): \(error.message)", metadata: ["plugin": "\(path)"])
                continue
            }
            failures += loaded.manifest.failures
            var accepted: [WorkerProvider] = []
            for provider in loaded.manifest.providers {
                let id = provider.descriptor.id
                guard !taken.contains(id) else {
                    let failure = PluginLoadFailure(path: path, code: .duplicateProvider,
                                                    message: "provider id '\(id)' is already provided; the first one wins", providerID: id)
                    failures.append(failure)
                    logger.error("plugin provider rejected: \(path): \(failure.message)", metadata: ["plugin": "\(path)"])
                    continue
                }
                taken.insert(id)
                accepted.append(provider)
            }
            guard !accepted.isEmpty else {
                slot.stop()
                if !failures.contains(where: { $0.path == path }) {
                    failures.append(PluginLoadFailure(path: path, code: .noProviders, message: "the plugin offers no usable provider"))
                }
                continue
            }
            slots.append(slot)
            for provider in accepted {
                providers.append(provider.descriptor)
                slotByProvider[provider.descriptor.id] = slot
                if provider.supportsVoiceEmbedding { embedders.insert(provider.descriptor.id) }
            }
            // The worker's registry has logged each provider it loaded (with this worker's pid).
        }
        self.providers = providers
        self.failures = failures
        self.slots = slots
        self.slotByProvider = slotByProvider
        self.embedders = embedders
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "speakersync.provider-watchdog"))
        watchdog = timer
        timer.schedule(deadline: .now() + config.watchdogIntervalSeconds, repeating: config.watchdogIntervalSeconds,
                       leeway: .milliseconds(50))
        timer.setEventHandler { [slots] in
            let now = MonotonicClock.seconds
            for slot in slots { for worker in slot.workers { worker.checkDeadlines(at: now) } }
        }
        timer.resume()
    }

    deinit { shutdown() }

    /// Unavailable while held back after crashes, or when the plugin said at load that it cannot serve
    /// (revision 4's `availability`: a model not configured, a licence that did not activate).
    public func status(of providerID: String) -> ProviderStatus {
        if let reason = provider(id: providerID)?.unavailableReason {
            return .unavailable(reason: reason, retryAfterSeconds: nil)
        }
        return slotByProvider[providerID]?.status ?? .available
    }

    public func supportsVoiceEmbedding(providerID: String) -> Bool {
        embedders.contains(providerID)
    }

    public func embedVoice(providerID: String, samples: [Float]) throws(PluginError) -> [Float] {
        guard let slot = slotByProvider[providerID] else { throw unknown(providerID) }
        guard embedders.contains(providerID) else {
            throw PluginError(.invalidArgument, "provider '\(providerID)' does not compute voice embeddings")
        }
        return try slot.sharedWorker().embedVoice(providerID: providerID, samples: samples)
    }

    public func makeSession(_ request: ProviderSessionRequest, queue: DispatchQueue,
                            events: @escaping @Sendable (ProviderEvent) -> Void) throws(PluginError) -> any ProviderSession {
        guard let slot = slotByProvider[request.providerID] else { throw unknown(request.providerID) }
        if case .unavailable(let reason, _) = status(of: request.providerID) {
            throw PluginError(.providerUnavailable, reason)
        }
        guard request.sampleRate > 0, request.sampleRate <= Int(UInt32.max) else {
            throw PluginError(.invalidArgument, "sample rate \(request.sampleRate) is not a positive 32-bit value")
        }
        let worker: WorkerProcess
        let onClose: @Sendable () -> Void
        switch config.mode {
        case .process, .none:
            worker = try slot.sharedWorker()
            onClose = {}
        case .session:
            worker = try slot.dedicatedWorker()
            onClose = { [weak slot] in slot?.release(dedicated: worker) }
        }
        let session = RemoteProviderSession(
            providerID: request.providerID, sessionID: request.sessionID,
            instanceID: nextInstance.add(1, ordering: .relaxed).oldValue, worker: worker, queue: queue,
            coalescesQuietPushes: request.coalescesQuietPushes, events: events, onClose: onClose)
        do {
            try session.start(request)
        } catch {
            onClose()
            throw error
        }
        return session
    }

    /// Stops every worker (they see end of stream and exit; the reaper collects them).
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        watchdog.cancel()
        for slot in slots { slot.stop() }
        loop.stop()
    }

    public var workers: [ProviderWorkerInfo] {
        slots.flatMap { slot in
            slot.workers.filter { !$0.hasEnded }.map {
                ProviderWorkerInfo(processID: $0.pid, pluginPath: slot.pluginPath, sessionCount: $0.sessionCount)
            }
        }
    }

    /// The process ids of the running workers (tests, benchmarks).
    public var workerProcessIDs: [Int32] { workers.map(\.processID) }

    private func unknown(_ providerID: String) -> PluginError {
        if ProviderDescriptor.builtins.contains(where: { $0.id == providerID }) {
            return PluginError(.builtinProvider, "provider '\(providerID)' is built in and has no plugin instance")
        }
        return PluginError(.unknownProvider, "no diarization provider '\(providerID)' is loaded")
    }

    /// The worker executable: configured, SPEAKERSYNC_WORKER_EXECUTABLE, the running `speakersync`, or
    /// `speakersync` beside the running executable (a test bundle in .build/<config>/).
    static func workerExecutable(_ configured: String?) throws(PluginError) -> String {
        var candidates: [String] = []
        if let configured { candidates.append(configured) }
        if let env = ProcessInfo.processInfo.environment["SPEAKERSYNC_WORKER_EXECUTABLE"], !env.isEmpty { candidates.append(env) }
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let url = URL(fileURLWithPath: running)
        if url.lastPathComponent == "speakersync" { candidates.append(url.path) }
        candidates.append(url.deletingLastPathComponent().appendingPathComponent("speakersync").path)
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw PluginError(.providerUnavailable, "no provider worker executable: looked for \(candidates.joined(separator: ", ")); set SPEAKERSYNC_WORKER_EXECUTABLE")
    }
}
