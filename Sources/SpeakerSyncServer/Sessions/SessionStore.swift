import SpeakerSyncStore
import TranscriptMerge

/// The persistence a session needs. The server binds it to PostgreSQL (`PostgresSessionStore`).
public protocol SessionStore: Sendable {
    /// Queues a step; `completion` runs once it is committed (or failed), on an arbitrary thread.
    /// Completions for one conversation run in the order its steps were queued: the session sends
    /// transcript deltas in that order, and a later delta applied before an earlier one would undo it.
    func persist(_ step: PersistStep, conversationID: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    /// Loads a conversation for resuming; nil when it does not exist. Blocking; never on the lws thread.
    func load(conversationID: String) throws -> StoredConversation?
    /// The voices a session with an embedding provider should recognise: the device's enrolled people
    /// and the conversation's speakers from earlier sessions. Blocking; on the session queue.
    func voices(deviceID: String, conversationID: String, provider: String) throws -> (people: [PersonRecord], speakers: [SpeakerProfileRecord])
    /// The device a stored conversation belongs to; nil when it does not exist. Blocking.
    func owningDevice(conversationID: String) throws -> String?
    /// The provider the device chose in the console (`device_settings`), for a `start` that names none.
    func deviceProvider(deviceID: String) throws -> String?
    /// A stored labelling of the conversation (a shadow provider's, to continue on resume); nil when none.
    func labelling(conversationID: String, name: String) throws -> LabellingRecord?
    /// Seconds of audio stored for the device's conversations (its stored-audio quota). Blocking.
    func storedAudioSeconds(deviceID: String) throws -> Double
    /// Claims the conversation for a starting session across the fleet (`ConversationLeases`). Blocking.
    func claimConversation(_ conversationID: String, deviceID: String) throws -> FleetClaim
    /// Asks the server holding the conversation to hand it over. Blocking.
    func requestHandover(conversationID: String, holder: Int) throws
    /// Gives a claim back after the session's last write was queued. Blocking.
    func releaseConversation(_ conversationID: String, fence: WriteFence) throws
}

/// A starting session's claim on its conversation across the fleet.
public enum FleetClaim: Sendable, Equatable {
    /// This server's, under the fence's epoch: the session's writes carry it.
    case fenced(WriteFence)
    /// The store keeps no leases (one server in memory, tests of session logic).
    case unfenced
    /// A live server runs the conversation.
    case held(serverInstance: Int)
}

extension SessionStore {
    /// Stores without a cheaper lookup load the whole conversation.
    public func owningDevice(conversationID: String) throws -> String? {
        try load(conversationID: conversationID)?.state.deviceID
    }

    /// Stores without labellings: a resumed shadow starts afresh.
    public func labelling(conversationID: String, name: String) throws -> LabellingRecord? { nil }

    /// Stores without stored audio count none.
    public func storedAudioSeconds(deviceID: String) throws -> Double { 0 }

    /// Stores without leases run every conversation unfenced (one server).
    public func claimConversation(_ conversationID: String, deviceID: String) throws -> FleetClaim { .unfenced }
    public func requestHandover(conversationID: String, holder: Int) throws {}
    public func releaseConversation(_ conversationID: String, fence: WriteFence) throws {}

    /// Stores without device settings: every device uses the server default.
    public func deviceProvider(deviceID: String) throws -> String? { nil }

    /// Stores without voices (tests of session logic) recognise no one.
    public func voices(deviceID: String, conversationID: String, provider: String) throws -> (people: [PersonRecord], speakers: [SpeakerProfileRecord]) {
        ([], [])
    }
}
