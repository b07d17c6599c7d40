import ProviderInterface
#if canImport(Glibc)
import Glibc
#endif

/// Where provider instances run.
public enum ProviderIsolationMode: String, Sendable, Hashable, CaseIterable {
    /// One worker process per plugin file, all its sessions' instances inside (the default): a crash
    /// ends that provider's sessions only, and one process keeps the models loaded for all of them.
    case process
    /// One worker process per session: a crash ends that session only; each session pays a process
    /// start and its own copy of the models.
    case session
    /// In the server's own process, as before isolation existed: for benchmarks and debugging. A
    /// crashing provider takes the server down.
    case none
}

/// How the server runs its provider workers. `.default` is what `speakersync serve` uses.
public struct ProviderIsolationConfig: Sendable {
    public var mode: ProviderIsolationMode
    /// The executable started as `EXECUTABLE provider-worker …`; nil: `speakersync` found beside the
    /// running executable (the server itself when it is `speakersync`), or SPEAKERSYNC_WORKER_EXECUTABLE.
    public var workerExecutable: String?
    /// RLIMIT_DATA of each worker (heap, anonymous mappings, thread stacks); nil: unlimited.
    public var memoryLimitBytes: UInt64?
    public var deadlines: ProviderDeadlines
    public var crashLoop: CrashLoopPolicy
    /// How much lower than the server workers run (nice), so provider compute never starves the
    /// server's I/O, merge and storage threads when the cores are saturated.
    public var niceIncrement: Int32
    /// How often the watchdog looks at the calls in flight.
    public var watchdogIntervalSeconds: Double
    /// The server's provider configuration (`serve --provider-config`), nil for none. Each worker
    /// receives over its socket the sections of the providers its plugin declares, and no other.
    public var providerConfiguration: ProviderConfiguration? = nil
    /// How workers are confined (docs/security.md, "The provider sandbox").
    public var sandbox: ProviderSandboxConfig = .default
    /// Whether workers tell their plugins how long each push waited (ABI revision 5's
    /// `backlog_seconds`), so a plugin that sheds load (speakerkit) does; only sessions arriving at
    /// real-time pace count (`ArrivalPace`). On by default since issue 31: without it, a server past
    /// its capacity delivers every label ever later (10 s p95 at 100 speakerkit sessions on two cores);
    /// with it, within about a second even at 150 (docs/benchmarks.md, "Load shedding on by default").
    /// The price: finalize keeps at most 120 s of shed windows per session, so a long meeting shed for
    /// long loses embeddings its final labels need; a server shedding for long is under-sized.
    public var reportsBacklog = true

    public init(mode: ProviderIsolationMode, workerExecutable: String? = nil, memoryLimitBytes: UInt64?,
                deadlines: ProviderDeadlines, crashLoop: CrashLoopPolicy, niceIncrement: Int32, watchdogIntervalSeconds: Double) {
        self.mode = mode
        self.workerExecutable = workerExecutable
        self.memoryLimitBytes = memoryLimitBytes
        self.deadlines = deadlines
        self.crashLoop = crashLoop
        self.niceIncrement = niceIncrement
        self.watchdogIntervalSeconds = watchdogIntervalSeconds
    }

    /// Process isolation; each worker may use half of the machine's memory (`defaultMemoryLimitBytes`);
    /// the default deadlines and crash-loop policy; workers at nice +5.
    public static let `default` = ProviderIsolationConfig(
        mode: .process, memoryLimitBytes: defaultMemoryLimitBytes, deadlines: .default, crashLoop: .default, niceIncrement: 5,
        watchdogIntervalSeconds: 0.25)

    /// Half the physical memory (at least 1 GiB). A worker holds all its provider's sessions in
    /// `process` mode, and speakerkit's take about 30 MiB of data each (the limit counts address space
    /// reserved for heap and thread stacks, not only what is resident: 1.6 GiB at 50 sessions, 17 MiB
    /// resident each), so the limit must leave room for hundreds; half the machine still leaves the
    /// server, PostgreSQL and the other workers their half when one provider leaks.
    public static var defaultMemoryLimitBytes: UInt64 {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), pageSize = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, pageSize > 0 else { return 8 << 30 }
        return max(1 << 30, UInt64(pages) * UInt64(pageSize) / 2)
    }
}

/// The provider sandbox as the operator configures it; each worker gets `ProviderSandboxSettings`.
public struct ProviderSandboxConfig: Sendable {
    /// false only for benchmarks and debugging: workers keep the server's privileges.
    public var enabled: Bool
    /// The account workers switch to when the server runs as root. A dedicated one: `nobody` is the
    /// embedded PostgreSQL's account (and other daemons'), which a plugin must not share.
    public var user: String
    /// Whether a root server creates `user` (useradd --system) when it does not exist.
    public var createsUser: Bool
    /// Provider ids whose worker may open internet sockets (Falcon activates its AccessKey online at
    /// every engine start, docs/falcon.md); every other worker gets EPERM.
    public var networkProviders: Set<String>

    public init(enabled: Bool = true, user: String = "speakersync-provider", createsUser: Bool = true,
                networkProviders: Set<String> = ["falcon"]) {
        self.enabled = enabled
        self.user = user
        self.createsUser = createsUser
        self.networkProviders = networkProviders
    }

    public static let `default` = ProviderSandboxConfig()
}
