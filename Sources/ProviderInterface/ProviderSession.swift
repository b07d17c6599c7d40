import Dispatch

/// One session's provider, wherever it runs: in the server's process (`InProcessProviderSession`
/// around a `DiarizationInstance`) or in a worker process (ProviderIsolation's remote session).
///
/// Calls never wait for the provider: `push` and `finalize` hand work over, and the results come back
/// as `ProviderEvent`s on the session's queue, in the order the work was handed over. In process the
/// provider runs inside the call and the event is delivered before it returns; a worker delivers it
/// later. Callers therefore treat every event as possibly arriving inside their own call.
///
/// Threading: call from the session's serial queue only (the one given at creation).
public protocol ProviderSession: AnyObject, Sendable {
    var providerID: String { get }
    /// Samples handed to `push` whose turns have not come back yet (backpressure).
    var pendingSampleCount: Int { get }
    /// Hand over the next samples (16 kHz mono float). Delivers `.processed` (or `.failed`).
    func push(samples: [Float])
    /// No more audio. Delivers `.finalized` with the last turns and the voice profile of every speaker
    /// the provider reported or was given (or `.failed`). Call at most once.
    func finalize()
    /// Release the provider instance; no event is delivered afterwards. Idempotent.
    func close()
}

/// What a provider session reports, on the session's queue.
public enum ProviderEvent: Sendable {
    /// The turns one push produced (new, revised, removed).
    case processed(ProviderChunkResult)
    /// The final turns after `finalize`, with the speakers' voice profiles.
    case finalized(ProviderFinalResult)
    /// The provider failed; the session gets no further events. Crashes, hangs and plugin errors alike.
    case failed(PluginError)
}

/// What one or more consecutive pushes produced. A provider in a worker reports pushes that produced
/// no turns together (up to a second of audio), so the session is not woken for nothing ten times a
/// second; a push with turns is reported at once.
public struct ProviderChunkResult: Sendable {
    public var turns: [ProviderTurn]
    /// Samples of the pushes reported.
    public var sampleCount: Int
    /// For each push reported, in order: seconds from handing its samples over to its answer (what the
    /// session waited).
    public var chunkWallSeconds: [Double]
    /// CPU the provider spent on these pushes (thread CPU time of the calls, wherever they ran).
    public var cpuSeconds: Double
    /// A snapshot of the speakers' voice profiles, taken every `profileSnapshotSeconds` of audio (empty
    /// otherwise): stored as the session goes, so a server that dies mid-session leaves profiles a
    /// resume can bind the same labels to (before, they were stored only at finalize).
    public var profiles: [Int32: SpeakerProfile]

    public init(turns: [ProviderTurn], sampleCount: Int, chunkWallSeconds: [Double], cpuSeconds: Double,
                profiles: [Int32: SpeakerProfile] = [:]) {
        self.turns = turns
        self.sampleCount = sampleCount
        self.chunkWallSeconds = chunkWallSeconds
        self.cpuSeconds = cpuSeconds
        self.profiles = profiles
    }

    /// Appends a later push's result.
    public mutating func append(_ later: ProviderChunkResult) {
        turns += later.turns
        sampleCount += later.sampleCount
        chunkWallSeconds += later.chunkWallSeconds
        cpuSeconds += later.cpuSeconds
        profiles.merge(later.profiles) { _, newer in newer }
    }
}

public struct ProviderFinalResult: Sendable {
    public var turns: [ProviderTurn]
    /// By provider speaker index; empty for providers without speaker embeddings.
    public var profiles: [Int32: SpeakerProfile]
    public var cpuSeconds: Double

    public init(turns: [ProviderTurn], profiles: [Int32: SpeakerProfile], cpuSeconds: Double) {
        self.turns = turns
        self.profiles = profiles
        self.cpuSeconds = cpuSeconds
    }
}

/// What a session asks a provider host for.
public struct ProviderSessionRequest: Sendable {
    public var providerID: String
    public var sessionID: String
    public var sampleRate: Int
    public var optionsJSON: String
    public var knownSpeakers: [KnownSpeaker]
    /// Whether pushes without turns may be reported together (see `ProviderChunkResult`); a caller that
    /// must see every push answered (a benchmark of the round trip) turns it off.
    public var coalescesQuietPushes: Bool

    public init(providerID: String, sessionID: String, sampleRate: Int = 16_000, optionsJSON: String,
                knownSpeakers: [KnownSpeaker] = [], coalescesQuietPushes: Bool = true) {
        self.providerID = providerID
        self.sessionID = sessionID
        self.sampleRate = sampleRate
        self.optionsJSON = optionsJSON
        self.knownSpeakers = knownSpeakers
        self.coalescesQuietPushes = coalescesQuietPushes
    }
}

/// Whether sessions can use a provider now.
public enum ProviderStatus: Sendable, Hashable {
    case available
    /// Held back (a crash loop, a worker that cannot start); `retryAfterSeconds` when that is known.
    case unavailable(reason: String, retryAfterSeconds: Double?)
}

/// The providers a server offers and the sessions made from them: the plugin registry in the server's
/// own process (`PluginRegistry`), or provider workers (ProviderIsolation's `IsolatedProviderHost`).
public protocol ProviderHost: AnyObject, Sendable {
    /// Built-ins first, then plugin providers in load order.
    var providers: [ProviderDescriptor] { get }
    /// Plugins and providers that could not be loaded.
    var failures: [PluginLoadFailure] { get }
    /// Whether new sessions can use the provider now (built-ins are always available).
    func status(of providerID: String) -> ProviderStatus
    func supportsVoiceEmbedding(providerID: String) -> Bool
    /// The provider's embedding of one person's voice (enrolment). Blocking; any thread but lws's.
    func embedVoice(providerID: String, samples: [Float]) throws(PluginError) -> [Float]
    /// A provider session; `events` runs on `queue`. Blocking until the instance exists; call on `queue`.
    func makeSession(_ request: ProviderSessionRequest, queue: DispatchQueue,
                     events: @escaping @Sendable (ProviderEvent) -> Void) throws(PluginError) -> any ProviderSession
    /// The worker processes running providers now (empty when they run in the server).
    var workers: [ProviderWorkerInfo] { get }
    /// Stops whatever the host runs (workers). Sessions still open get no more events.
    func shutdown()
}

/// One provider worker process, for `/healthz` and operators.
public struct ProviderWorkerInfo: Sendable, Hashable {
    public var processID: Int32
    /// The plugin file it hosts.
    public var pluginPath: String
    /// Provider sessions it runs now.
    public var sessionCount: Int

    public init(processID: Int32, pluginPath: String, sessionCount: Int) {
        self.processID = processID
        self.pluginPath = pluginPath
        self.sessionCount = sessionCount
    }
}

extension ProviderHost {
    /// Whether a new session could use this provider now: it is loaded and not held back.
    public func isAvailable(_ providerID: String) -> Bool {
        guard provider(id: providerID) != nil, case .available = status(of: providerID) else { return false }
        return true
    }

    /// The provider with this id, built-in or plugin.
    public func provider(id: String) -> ProviderDescriptor? {
        providers.first { $0.id == id }
    }
}
