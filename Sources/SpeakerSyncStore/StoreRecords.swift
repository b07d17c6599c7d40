import TranscriptMerge

/// Conversation metadata a session writes when it starts, as it goes, and when it ends.
public struct ConversationState: Sendable, Equatable {
    public var id: String
    public var deviceID: String
    public var provider: String
    public var sampleRate: Int
    public var encoding: String
    public var language: String?
    public var optionsJSON: String
    public var status: Status
    /// Audio received so far, on the conversation timeline (includes earlier sessions).
    public var audioSeconds: Double
    /// Why the conversation is interrupted (nil while active and once finalized).
    public var statusReason: String?
    /// The server instance (`ServerLease`) running the conversation's session, so a server starting
    /// after a crash can tell orphaned active conversations from those of servers still running.
    public var serverInstance: Int?

    public enum Status: String, Sendable { case active, finalized, interrupted }

    public init(id: String, deviceID: String, provider: String, sampleRate: Int, encoding: String, language: String?, optionsJSON: String,
                status: Status, audioSeconds: Double, statusReason: String? = nil, serverInstance: Int? = nil) {
        self.statusReason = statusReason
        self.serverInstance = serverInstance
        self.id = id
        self.deviceID = deviceID
        self.provider = provider
        self.sampleRate = sampleRate
        self.encoding = encoding
        self.language = language
        self.optionsJSON = optionsJSON
        self.status = status
        self.audioSeconds = audioSeconds
    }
}

/// Everything one session step changes, written in one transaction with the other steps of the
/// same drain. Steps of one conversation are committed in the order they were enqueued.
public struct PersistStep: Sendable {
    public var conversation: ConversationState?
    public var changedWords: [LabelledWord] = []
    public var removedWords: [WordID] = []
    public var upsertedTurns: [(provider: String, turn: SpeakerTurn)] = []
    public var removedTurns: [(provider: String, turnID: String)] = []
    public var speakers: [SessionSpeaker] = []
    /// provider-scoped key → label assignments made in this step.
    public var keyLabels: [String: String] = [:]
    /// Voice profiles of the conversation's speakers in a provider's embedding space (kept at the end
    /// of each session, so a reconnect recognises them).
    public var speakerProfiles: [(provider: String, profile: SpeakerProfileRecord)] = []
    public var conversationEnded = false
    /// Labellings written whole in this step (each replaces the stored one of its name).
    public var labellings: [LabellingRecord] = []
    /// Audio to keep (`store_audio`), compressed by the writer.
    public var audioChunks: [AudioChunkRecord] = []
    /// The epoch of the session's claim on its conversation (`ConversationLeases`): the step is
    /// committed only while the conversation's lease still has it. nil: not fenced (stores without
    /// leases, tests of the writer).
    public var fence: WriteFence?
    /// The session's last step (its end): the conversation's lease is given up in the step's own
    /// transaction, if the step's fence still holds it. One statement per drain for every end in it,
    /// where a statement of its own per end was 500 more commits in the second 500 sessions ended.
    public var releasesLease = false

    public init() {}

    public var isEmpty: Bool {
        conversation == nil && changedWords.isEmpty && removedWords.isEmpty && upsertedTurns.isEmpty
            && removedTurns.isEmpty && speakers.isEmpty && keyLabels.isEmpty && speakerProfiles.isEmpty && !conversationEnded
            && labellings.isEmpty && audioChunks.isEmpty && !releasesLease
    }
}

/// A session's claim on its conversation, carried by each of its writes (a fencing token).
public struct WriteFence: Sendable, Hashable {
    public var epoch: Int64
    /// The server that claimed it (recorded with the write in `conversation_writes`).
    public var serverInstance: Int

    public init(epoch: Int64, serverInstance: Int) {
        self.epoch = epoch
        self.serverInstance = serverInstance
    }
}

/// What a resumed session starts from.
public struct StoredConversation: Sendable {
    public var state: ConversationState
    public var words: [LabelledWord]
    public var turns: [(provider: String, turn: SpeakerTurn)]
    public var speakers: [SessionSpeaker]
    public var keyLabels: [String: String]

    public init(state: ConversationState, words: [LabelledWord], turns: [(provider: String, turn: SpeakerTurn)], speakers: [SessionSpeaker], keyLabels: [String: String]) {
        self.state = state
        self.words = words
        self.turns = turns
        self.speakers = speakers
        self.keyLabels = keyLabels
    }
}

