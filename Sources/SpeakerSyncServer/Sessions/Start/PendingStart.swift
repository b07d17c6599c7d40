import Dispatch
import SessionProtocol
import SpeakerSyncStore

/// A start between `.begin` and the `session` message: what it has set up so far (so one cleanup
/// path can undo it), and the state machine's actions that came meanwhile.
struct PendingStart {
    var request: StartRequest
    var providerSource = "request"
    var conversationID: String
    let deadline: ContinuousClock.Instant
    /// Actions held back until `session` is sent, with the input bytes they hold.
    var held: [(actions: [SessionAction], bytes: Int)] = []
    /// A read for the start is running on `startReads`; its result finishes an abandonment.
    var reading = false
    /// The start was abandoned (the peer left, a fatal error, the server stopping) while a read ran.
    var abandonedReason: String?
    var claimed = false
    /// The conversation's lease in the fleet (`FleetClaim`), once claimed: every write carries it.
    var fence: WriteFence?
    /// The server holding the conversation was asked to hand it over (once per start).
    var handoverAsked = false
    /// The conversation row was queued for writing: an abandoned start then stores it interrupted, so
    /// no conversation is left `active` without a session.
    var conversationQueued = false
    var deadlineTimer: (any DispatchSourceTimer)?
}

/// What the start reads from PostgreSQL, off the session's queue.
struct StartFacts: Sendable {
    var deviceProvider: String?
    var owner: String?
}

struct ConversationFacts: Sendable {
    var stored: StoredConversation?
    var voices: (people: [PersonRecord], speakers: [SpeakerProfileRecord]) = ([], [])
    var shadowLabellings: [String: LabellingRecord] = [:]
    /// `store_audio`: what the device has stored already (nil: not asked, or could not be read).
    var storedAudioSeconds: Double?
}
