import CSpeakerSyncPluginABI

/// A provider written in Swift, behind the plugin ABI: `PluginEntryTables` turns it into the C
/// factory and instance tables, so a Swift plugin is this protocol and nothing of the C glue.
///
/// Threads (the ABI's): `describe`/`availability` on the loader thread, `checkOptions` and
/// `embedVoice` on any host thread concurrently, `makeSession` and every session call on that
/// session's queue (never concurrently for one session).
public protocol PluginProvider: AnyObject, Sendable {
    var descriptor: PluginDescriptor { get }
    /// nil when the provider can serve; else what the operator must do (revision 4's availability).
    func unavailableReason() -> String?
    /// Refuses options with a message naming the option (revision 3's check_options).
    func checkOptions(_ optionsJSON: String?) throws(PluginFailure)
    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession
    /// Whether `embedVoice` is offered (revision 2's embed_voice).
    var embedsVoices: Bool { get }
    /// One person's voice embedding from a short recording (enrolment).
    func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float]
    /// Whether `push(many:)` does better than one push after another (revision 6's push_audio_many is
    /// offered only then).
    var batchesPushes: Bool { get }
    /// Pushes into several of this provider's sessions at once (each listed once, each its turn): the
    /// same results as each session's `push` in turn, with their model work done together. Returns each
    /// push's failure, nil where it succeeded, in order.
    func push(many: [(session: any PluginProviderSession, samples: UnsafeBufferPointer<Float>)]) -> [PluginFailure?]
}

extension PluginProvider {
    public var embedsVoices: Bool { false }
    public func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        throw PluginFailure(.unsupported, "\(descriptor.id) computes no voice embeddings")
    }
    public func unavailableReason() -> String? { nil }
    public var batchesPushes: Bool { false }
    public func push(many: [(session: any PluginProviderSession, samples: UnsafeBufferPointer<Float>)]) -> [PluginFailure?] {
        pushEach(many)
    }

    /// Each session's own `push`, in order: what `push(many:)` is without batching, and what a provider
    /// that batches part of the work (the VAD, computed ahead) calls after that part.
    public func pushEach(_ many: [(session: any PluginProviderSession, samples: UnsafeBufferPointer<Float>)]) -> [PluginFailure?] {
        many.map { session, samples in
            do throws(PluginFailure) {
                try session.push(samples)
                return nil
            } catch {
                return error
            }
        }
    }
}

/// One session of a Swift provider. Called on the session's queue only.
public protocol PluginProviderSession: AnyObject {
    /// The next samples (16 kHz mono float), never empty.
    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure)
    /// Turns published since the last call: new, revised (same id) or removed.
    func pullTurns() -> [PluginTurn]
    /// No more audio: close open turns, revise any (the host pulls again afterwards).
    func finalize() throws(PluginFailure)
    /// A speaker's voice profile in the provider's embedding space, if it has one.
    func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)?
}

extension PluginProviderSession {
    public func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? { nil }
}

/// What the host asks a provider to create, from `speakersync_instance_config_t`.
public struct PluginSessionRequest: Sendable {
    public var sessionID: String
    public var sampleRate: Int
    public var optionsJSON: String?
    public var knownSpeakers: [PluginKnownSpeaker]
}

/// A voice to recognise from the start (an enrolled person, or an earlier speaker of the conversation).
public struct PluginKnownSpeaker: Sendable {
    public var speaker: Int32
    public var embedding: [Float]
    public var seconds: Double
    public var isPermanent: Bool
    public var name: String?
}

public struct PluginTurn: Sendable, Equatable {
    public var id: UInt64
    public var speaker: Int32
    public var startSeconds: Double
    public var endSeconds: Double
    public var confidence: Float
    public var isRemoved: Bool

    public init(id: UInt64, speaker: Int32, startSeconds: Double, endSeconds: Double, confidence: Float, isRemoved: Bool = false) {
        self.id = id
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
        self.isRemoved = isRemoved
    }
}

/// The descriptor's strings; `PluginEntryTables` keeps C copies for the plugin's lifetime.
public struct PluginDescriptor: Sendable {
    public var id: String
    public var name: String
    public var version: String
    public var description: String
    public var latencyClass: speakersync_latency_class_t
    public var licence: String
    public var requirements: String
    public var measured: String

    public init(id: String, name: String, version: String, description: String, latencyClass: speakersync_latency_class_t,
                licence: String, requirements: String, measured: String) {
        self.id = id
        self.name = name
        self.version = version
        self.description = description
        self.latencyClass = latencyClass
        self.licence = licence
        self.requirements = requirements
        self.measured = measured
    }
}

/// A failure a Swift provider reports: the ABI status and a message for the host.
public struct PluginFailure: Error, Sendable {
    public enum Kind: Sendable {
        case invalidArgument, badState, outOfMemory, unsupported, internalError, unavailable

        var status: speakersync_status_t {
            switch self {
            case .invalidArgument: SPEAKERSYNC_ERR_INVALID_ARGUMENT
            case .badState: SPEAKERSYNC_ERR_BAD_STATE
            case .outOfMemory: SPEAKERSYNC_ERR_OUT_OF_MEMORY
            case .unsupported: SPEAKERSYNC_ERR_UNSUPPORTED
            case .internalError: SPEAKERSYNC_ERR_INTERNAL
            case .unavailable: SPEAKERSYNC_ERR_UNAVAILABLE
            }
        }
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
