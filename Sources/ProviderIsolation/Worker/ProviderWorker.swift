#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Logging
import PluginHost
import Synchronization

/// How the server starts a worker (`speakersync provider-worker …`; not a user command).
public struct ProviderWorkerConfig: Sendable {
    /// The one plugin file this worker hosts.
    public var pluginPath: String
    /// The server's pid: the worker ends when that process does.
    public var parentPID: Int32
    public var protocolVersion: UInt32
    /// RLIMIT_DATA for the worker; nil leaves the inherited limit.
    public var memoryLimitBytes: UInt64?
    /// Nice increment over the server's priority.
    public var niceIncrement: Int32
    public var logLevel: Logger.Level
    /// Whether the server has a provider config: the worker then asks it for its providers' sections
    /// (`.configurationWanted`) over the socket. It never reads the file itself.
    public var receivesConfiguration: Bool
    public var sandbox: ProviderSandboxSettings
    /// Whether pushes report their wait to the plugin (`ProviderIsolationConfig.reportsBacklog`).
    public var reportsBacklog = false

    public init(pluginPath: String, parentPID: Int32, protocolVersion: UInt32, memoryLimitBytes: UInt64?,
                niceIncrement: Int32, logLevel: Logger.Level, receivesConfiguration: Bool = false,
                sandbox: ProviderSandboxSettings = .disabled) {
        self.receivesConfiguration = receivesConfiguration
        self.sandbox = sandbox
        self.pluginPath = pluginPath
        self.parentPID = parentPID
        self.protocolVersion = protocolVersion
        self.memoryLimitBytes = memoryLimitBytes
        self.niceIncrement = niceIncrement
        self.logLevel = logLevel
    }

    /// The command-line arguments that describe this config (after the executable and subcommand).
    public var arguments: [String] {
        var arguments = ["--plugin", pluginPath, "--parent-pid", "\(parentPID)", "--protocol", "\(protocolVersion)",
                         "--nice", "\(niceIncrement)", "--log-level", logLevel.rawValue]
        if let memoryLimitBytes { arguments += ["--memory-limit-bytes", "\(memoryLimitBytes)"] }
        if receivesConfiguration { arguments += ["--receives-configuration"] }
        if reportsBacklog { arguments += ["--report-backlog"] }
        return arguments + sandbox.arguments
    }
}

/// The worker process: loads one plugin file with the same `PluginRegistry` the server uses in process,
/// tells the server what it offers, then runs the instances the server asks for until the server closes
/// the socket (or dies: the kernel then kills the worker, PR_SET_PDEATHSIG).
///
/// Threads: a pool of about one thread per core (`InstanceExecutor`) takes turns reading requests and
/// runs each instance's calls in order, never two at once (the ABI's "session queue" rule); different
/// instances run concurrently, as in the server. Replies are written by the thread that produced them
/// (`WorkerOutbox`), so an instance's replies go out in the order of its requests.
public enum ProviderWorker {
    public static func run(_ config: ProviderWorkerConfig) -> Never {
        // The kernel kills this process when the thread that spawned it (the server's worker I/O thread,
        // which lives as long as the server) ends; if the server died before this line, end now.
        try? Syscall.setParentDeathSignal(SIGKILL)
        guard getppid() == config.parentPID else { _exit(0) }
        let descriptor = WorkerChannel.childDescriptor
        let outbox = WorkerOutbox(descriptor: descriptor)
        var logger = Logger(label: "speakersync.worker") { _ in WorkerLogHandler(outbox: outbox, logLevel: .trace) }
        logger.logLevel = config.logLevel
        guard config.protocolVersion == WorkerProtocol.version else {
            logger.critical("worker protocol \(WorkerProtocol.version), the server speaks \(config.protocolVersion): not the same build")
            Thread.sleep(forTimeInterval: 0.2)
            _exit(2)
        }
        // The sandbox's first step, taken before main by provider_sandbox.c's constructor (see ProviderSandbox).
        let sandbox = ProviderSandbox(settings: config.sandbox, logger: logger)
        var sandboxFailure: ProviderSandboxError?
        var account: (uid: UInt32, gid: UInt32)?
        do {
            try sandbox.prepare()
            // The plugin's own code runs from its load on: as the provider account already.
            account = try sandbox.becomeAccount(parentPID: config.parentPID)
        } catch {
            if error.code == .parentGone { _exit(0) }
            sandboxFailure = error
        }
        do {
            if let limit = config.memoryLimitBytes { try Syscall.limitData(bytes: limit) }
            try Syscall.lowerPriority(by: config.niceIncrement)
        } catch {
            logger.warning("worker limits not applied", metadata: ["error": "\(error)"])
        }
        if let sandboxFailure {
            // Loading the plugin now would run its code with more than the sandbox declares: it is not
            // loaded at all, and the server lists the file as failed with the reason.
            let reason = "the provider sandbox could not be applied (\(sandboxFailure.code.rawValue)): \(sandboxFailure.message)"
            logger.error("provider worker refuses to load its plugin", metadata: ["reason": "\(reason)"])
            let failure = PluginLoadFailure(path: config.pluginPath, code: .sandboxFailed, message: reason)
            outbox.send(.ready(WorkerManifest(protocolVersion: WorkerProtocol.version, providers: [], failures: [failure])))
            let server = WorkerServer(registry: PluginRegistry(libraryPaths: [], logger: logger), outbox: outbox,
                                      refusal: PluginError(.providerUnavailable, reason), reportsBacklog: false, logger: logger)
            server.serve(descriptor: descriptor)
        }
        let (registry, _) = WorkerConfiguration.load(config, descriptor: descriptor, outbox: outbox, logger: logger)
        var providers = registry.providers.filter { if case .plugin = $0.kind { true } else { false } }.map {
            WorkerProvider(descriptor: $0, supportsVoiceEmbedding: registry.supportsVoiceEmbedding(providerID: $0.id))
        }
        // The plugin and its models are loaded: the rest of the sandbox, before any request is read.
        if config.sandbox.enabled {
            do {
                _ = try sandbox.confine(providerIDs: providers.map(\.descriptor.id), account: account)
            } catch {
                sandboxFailure = error
            }
        }
        var refusal: PluginError?
        if let sandboxFailure {
            // Running the plugin now would give it more than the sandbox declares: every provider is
            // listed unavailable with the reason, and every request is refused.
            let reason = "the provider sandbox could not be applied (\(sandboxFailure.code.rawValue)): \(sandboxFailure.message)"
            logger.error("provider worker refuses to run its providers", metadata: ["reason": "\(reason)"])
            refusal = PluginError(.providerUnavailable, reason)
            for index in providers.indices {
                providers[index].descriptor.unavailableReason = reason
                providers[index].supportsVoiceEmbedding = false
            }
        }
        outbox.send(.ready(WorkerManifest(protocolVersion: WorkerProtocol.version, providers: providers, failures: registry.failures)))
        let server = WorkerServer(registry: registry, outbox: outbox, refusal: refusal, reportsBacklog: config.reportsBacklog, logger: logger)
        server.serve(descriptor: descriptor)
    }
}

/// The request side of a worker: decodes frames and runs them on the instances' queues.
final class WorkerServer: @unchecked Sendable {
    private let registry: PluginRegistry
    private let outbox: WorkerOutbox
    private let logger: Logger
    /// Set when the sandbox failed: every create, options check and enrolment fails with it.
    private let refusal: PluginError?
    /// Touched only by the executor thread that is reading at the time (one at a time).
    private var instances: [UInt64: WorkerInstance] = [:]
    private let utility = DispatchQueue(label: "speakersync.worker.utility", attributes: .concurrent)
    /// Runs instance calls: in order per instance, on about one thread per core. CPU-bound provider
    /// calls on more threads than cores only time-slice against each other and evict each other's
    /// weights from the caches (a serial dispatch queue per instance gave 37 threads for 50 speakerkit
    /// sessions on 2 cores).
    /// Pushes into a plugin with push_audio_many that queued up behind each other run as one call
    /// (`InstanceExecutor`'s batches; `runPushes`).
    private let executor: InstanceExecutor

    init(registry: PluginRegistry, outbox: WorkerOutbox, refusal: PluginError?, reportsBacklog: Bool, logger: Logger) {
        self.refusal = refusal
        self.registry = registry
        self.outbox = outbox
        self.logger = logger
        let backlog = reportsBacklog ? WorkerBacklog(registry: registry) : nil
        self.backlog = backlog
        executor = InstanceExecutor(runBatch: { items in
            Self.runPushes(items.compactMap { $0 as? PendingPush }, backlog: backlog)
        })
    }

    /// What the plugins' backlog_seconds reads, when the server asked for it (`--load-shedding on`:
    /// `ProviderWorkerConfig.reportsBacklog`); nil otherwise, and they read 0.
    private let backlog: WorkerBacklog?

    /// Several instances' pushes in one call into their plugin (their turn: each was first in its mailbox).
    private static func runPushes(_ pushes: [PendingPush], backlog: WorkerBacklog?) {
        backlog?.note(pushes)
        InProcessProviderSession.push(many: pushes.compactMap { push in
            (push.instance.session as? InProcessProviderSession).map { ($0, push.samples) }
        })
    }

    /// Serves requests until the server closes the socket; never returns. The calling thread only
    /// waits: the executor's threads take turns reading (see `InstanceExecutor`).
    func serve(descriptor: Int32) -> Never {
        let reader = WorkerRequestReader(descriptor: descriptor, chunkBytes: 256 << 10, logger: logger)
        executor.start { [self] in reader.readOnce(handle) }
        while true { pause() }
    }

    private func handle(_ request: WorkerRequest) {
        if let refusal {
            switch request {
            case .create(let create): outbox.send(.createFailed(instance: create.instance, error: refusal))
            case .checkOptions(let id, _, _), .embedVoice(let id, _, _): outbox.send(.answered(request: id, result: .failure(refusal)))
            case .push, .finalize, .destroy, .configure: break
            }
            return
        }
        switch request {
        case .configure:
            // Only ever sent before `.ready` (WorkerConfiguration); a late one changes nothing.
            logger.warning("a provider configuration after the plugin was loaded is ignored")
        case .create(let create):
            let instance = WorkerInstance(id: create.instance, sampleRate: create.sampleRate)
            instances[create.instance] = instance
            executor.submit(instance.mailbox, mayTakeLong: true) { [self] in
                do throws(PluginError) {
                    instance.session = try registry.makeSession(
                        ProviderSessionRequest(providerID: create.providerID, sessionID: create.sessionID, sampleRate: create.sampleRate,
                                               optionsJSON: create.optionsJSON, knownSpeakers: create.knownSpeakers),
                        queue: WorkerInstance.unusedQueue,
                        events: { [outbox] event in Self.reply(event, instance: create.instance, outbox: outbox) })
                    instance.batchKey.store((instance.session as? InProcessProviderSession)?.batchKey ?? 0, ordering: .releasing)
                    outbox.send(.created(instance: create.instance))
                } catch {
                    outbox.send(.createFailed(instance: create.instance, error: error))
                }
            }
        case .push(let id, let samples, let arrivedSeconds):
            guard let instance = instances[id] else { return }
            instance.pace.arrived(audioSeconds: Double(samples.count) / Double(instance.sampleRate), at: arrivedSeconds)
            let push = PendingPush(instance: instance, samples: samples, arrivedSeconds: arrivedSeconds, isRealTime: instance.pace.isRealTime)
            // Batchable once its session exists (0 before create has run, or for a plugin without push_audio_many).
            let key = instance.batchKey.load(ordering: .acquiring)
            executor.submit(instance.mailbox, batch: key == 0 ? nil : (key: key, item: push as Any)) { [backlog] in
                backlog?.note([push])
                instance.session?.push(samples: samples)
            }
        case .finalize(let id):
            guard let instance = instances[id] else { return }
            executor.submit(instance.mailbox, mayTakeLong: true) { instance.session?.finalize() }
        case .destroy(let id):
            guard let instance = instances.removeValue(forKey: id) else { return }
            executor.submit(instance.mailbox) {
                instance.session?.close()
                instance.session = nil
            }
        case .checkOptions(let request, let providerID, let optionsJSON):
            utility.async { [self] in
                do throws(PluginError) {
                    try registry.checkOptions(providerID: providerID, optionsJSON: optionsJSON)
                    outbox.send(.answered(request: request, result: .success([])))
                } catch {
                    outbox.send(.answered(request: request, result: .failure(error)))
                }
            }
        case .embedVoice(let request, let providerID, let samples):
            utility.async { [self] in
                do throws(PluginError) {
                    outbox.send(.answered(request: request, result: .success(try registry.embedVoice(providerID: providerID, samples: samples))))
                } catch {
                    outbox.send(.answered(request: request, result: .failure(error)))
                }
            }
        }
    }

    private static func reply(_ event: ProviderEvent, instance: UInt64, outbox: WorkerOutbox) {
        switch event {
        case .processed(let result):
            outbox.send(.processed(instance: instance, sampleCount: result.sampleCount, cpuSeconds: result.cpuSeconds, turns: result.turns,
                                   profiles: result.profiles))
        case .finalized(let result):
            outbox.send(.finalized(instance: instance, cpuSeconds: result.cpuSeconds, turns: result.turns, profiles: result.profiles))
        case .failed(let error):
            outbox.send(.instanceFailed(instance: instance, error: error))
        }
    }
}

/// One instance in the worker: its mailbox on the executor and, once created, its session (touched
/// only by the instance's calls, which the executor runs one at a time).
final class WorkerInstance: @unchecked Sendable {
    let id: UInt64
    let mailbox = InstanceExecutor.Mailbox()
    var session: (any ProviderSession)?
    /// The session's `batchKey` once created (0: none); read by the reader thread when it queues a push.
    let batchKey = Atomic<UInt>(0)
    let sampleRate: Int
    /// How its audio arrives; touched only by the reader thread, which reads pushes one at a time.
    var pace = ArrivalPace()

    init(id: UInt64, sampleRate: Int) {
        self.id = id
        self.sampleRate = max(1, sampleRate)
    }

    /// The queue `ProviderHost.makeSession` asks for: in process, events are delivered inside the
    /// call, on the executor thread running it, so no queue is used.
    static let unusedQueue = DispatchQueue(label: "speakersync.worker.unused")
}

/// The socket between the server and one worker: descriptor 3 in the worker.
enum WorkerChannel {
    static let childDescriptor: Int32 = 3
}
