#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Logging
import PluginHost

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

    public init(pluginPath: String, parentPID: Int32, protocolVersion: UInt32, memoryLimitBytes: UInt64?,
                niceIncrement: Int32, logLevel: Logger.Level) {
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
        return arguments
    }
}

/// The worker process: loads one plugin file with the same `PluginRegistry` the server uses in process,
/// tells the server what it offers, then runs the instances the server asks for until the server closes
/// the socket (or dies: the kernel then kills the worker, PR_SET_PDEATHSIG).
///
/// Threads: the main thread reads requests and hands each to its instance's serial queue (the ABI's
/// "session queue": calls on one instance never overlap, different instances run concurrently, as in
/// the server); `WorkerOutbox`'s thread writes the replies. An instance's replies go out in the order of
/// its requests.
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
        do {
            if let limit = config.memoryLimitBytes { try Syscall.limitData(bytes: limit) }
            try Syscall.lowerPriority(by: config.niceIncrement)
        } catch {
            logger.warning("worker limits not applied", metadata: ["error": "\(error)"])
        }
        let registry = PluginRegistry(libraryPaths: [config.pluginPath], logger: logger)
        let providers = registry.providers.filter { if case .plugin = $0.kind { true } else { false } }.map {
            WorkerProvider(descriptor: $0, supportsVoiceEmbedding: registry.supportsVoiceEmbedding(providerID: $0.id))
        }
        outbox.send(.ready(WorkerManifest(protocolVersion: WorkerProtocol.version, providers: providers, failures: registry.failures)))
        let server = WorkerServer(registry: registry, outbox: outbox, logger: logger)
        server.readLoop(descriptor: descriptor)
    }
}

/// The request side of a worker: decodes frames and runs them on the instances' queues.
final class WorkerServer: @unchecked Sendable {
    private let registry: PluginRegistry
    private let outbox: WorkerOutbox
    private let logger: Logger
    /// Touched only on the reading thread.
    private var instances: [UInt64: WorkerInstance] = [:]
    private let utility = DispatchQueue(label: "speakersync.worker.utility", attributes: .concurrent)

    init(registry: PluginRegistry, outbox: WorkerOutbox, logger: Logger) {
        self.registry = registry
        self.outbox = outbox
        self.logger = logger
    }

    func readLoop(descriptor: Int32) -> Never {
        var frames = FrameBuffer()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        while true {
            let count: Int
            do {
                guard let read = try Syscall.readSome(descriptor, into: chunk), read > 0 else { _exit(0) }
                count = read
            } catch {
                _exit(0)
            }
            frames.append(UnsafeRawBufferPointer(rebasing: chunk[0 ..< count]))
            do {
                try frames.drain { payload in handle(try WorkerRequest.decode(payload)) }
            } catch {
                logger.critical("unreadable request from the server; the worker stops", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.2)
                _exit(3)
            }
        }
    }

    private func handle(_ request: WorkerRequest) {
        switch request {
        case .create(let create):
            let instance = WorkerInstance(id: create.instance)
            instances[create.instance] = instance
            instance.queue.async { [self] in
                do throws(PluginError) {
                    instance.session = try registry.makeSession(
                        ProviderSessionRequest(providerID: create.providerID, sessionID: create.sessionID, sampleRate: create.sampleRate,
                                               optionsJSON: create.optionsJSON, knownSpeakers: create.knownSpeakers),
                        queue: instance.queue, events: { [outbox] event in Self.reply(event, instance: create.instance, outbox: outbox) })
                    outbox.send(.created(instance: create.instance))
                } catch {
                    outbox.send(.createFailed(instance: create.instance, error: error))
                }
            }
        case .push(let id, let samples):
            guard let instance = instances[id] else { return }
            instance.queue.async { instance.session?.push(samples: samples) }
        case .finalize(let id):
            guard let instance = instances[id] else { return }
            instance.queue.async { instance.session?.finalize() }
        case .destroy(let id):
            guard let instance = instances.removeValue(forKey: id) else { return }
            instance.queue.async {
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
            outbox.send(.processed(instance: instance, sampleCount: result.sampleCount, cpuSeconds: result.cpuSeconds, turns: result.turns))
        case .finalized(let result):
            outbox.send(.finalized(instance: instance, cpuSeconds: result.cpuSeconds, turns: result.turns, profiles: result.profiles))
        case .failed(let error):
            outbox.send(.instanceFailed(instance: instance, error: error))
        }
    }
}

/// One instance in the worker: its serial queue and, once created, its session (confined to the queue).
final class WorkerInstance: @unchecked Sendable {
    let id: UInt64
    let queue: DispatchQueue
    var session: (any ProviderSession)?

    init(id: UInt64) {
        self.id = id
        queue = DispatchQueue(label: "speakersync.worker.instance.\(id)", target: WorkerInstance.executor)
    }

    /// Where every instance queue runs: dispatch's non-overcommitting global queue, which keeps about as
    /// many threads busy as there are cores. Serial queues otherwise get a thread each whenever they
    /// have work (37 threads for 50 speakerkit sessions on 2 cores), and the kernel then time-slices
    /// CPU-bound provider calls against each other, evicting each other's weights from the caches.
    static let executor = DispatchQueue.global(qos: .default)
}

/// The socket between the server and one worker: descriptor 3 in the worker.
enum WorkerChannel {
    static let childDescriptor: Int32 = 3
}
