/// A message from the server to the device. Encode with `ServerMessageEncoder`.
public enum ServerMessage: Hashable, Sendable {
    /// The answer to a successful start; always the first message of a session.
    case session(SessionInfo)
    /// What changed in the transcript since the previous update.
    case transcript(TranscriptUpdate)
    /// The session's speakers with their display names, sent whenever one is added, renamed or merged.
    case speakers([WireSpeaker])
    case error(WireError)
    /// The session's own measurements, once, at finalize (right after the final transcript).
    case stats(SessionStats)
}

/// Payload of `session`.
public struct SessionInfo: Hashable, Sendable {
    /// The protocol version this file implements.
    public static let protocolVersion = 1

    public var conversationID: String
    public var provider: String
    /// The client's sample rate in Hz (as announced, before any resampling).
    public var sampleRate: Int
    public var encoding: AudioEncoding
    /// Who recognises the words: the device, or the server from the audio.
    public var asr: ASRMode
    /// True when the conversation already existed and this connection continues it.
    public var resumed: Bool
    /// Where this connection's first audio sample lies on the conversation timeline, in seconds.
    public var audioOffsetSeconds: Double
    public var serverVersion: String
    public var protocolVersion: Int
    /// Where `provider` came from: "request" (the start named it), "device" (the device's console
    /// setting) or "server" (the server default); nil leaves the field out.
    public var providerSource: String?

    public init(
        conversationID: String, provider: String, sampleRate: Int, encoding: AudioEncoding, asr: ASRMode = .device,
        resumed: Bool, audioOffsetSeconds: Double, serverVersion: String, protocolVersion: Int = SessionInfo.protocolVersion,
        providerSource: String? = nil
    ) {
        self.asr = asr
        self.providerSource = providerSource
        self.conversationID = conversationID
        self.provider = provider
        self.sampleRate = sampleRate
        self.encoding = encoding
        self.resumed = resumed
        self.audioOffsetSeconds = audioOffsetSeconds
        self.serverVersion = serverVersion
        self.protocolVersion = protocolVersion
    }
}

/// Payload of `transcript`: utterances upserted by id and ids of removed utterances.
public struct TranscriptUpdate: Hashable, Sendable {
    /// 1, 2, 3, … per connection; a client can detect a lost or reordered update.
    public var revision: UInt64
    public var upserted: [WireUtterance]
    /// Wire ids ("u3") of utterances that no longer exist.
    public var removed: [String]
    /// True on the last update, sent after `finalize` once everything is stored.
    public var isFinal: Bool

    public init(revision: UInt64, upserted: [WireUtterance], removed: [String], isFinal: Bool) {
        self.revision = revision
        self.upserted = upserted
        self.removed = removed
        self.isFinal = isFinal
    }
}

/// An utterance: consecutive words of one speaker.
public struct WireUtterance: Hashable, Sendable {
    /// Stable id, "u" followed by a number ("u12"); an upsert replaces the utterance with this id.
    public var id: String
    /// Session speaker label ("Speaker 1"); nil while the words are not attributed to anyone.
    public var speaker: String?
    /// Display name: the name given by `rename_speaker`, else the label; nil when `speaker` is nil.
    public var name: String?
    public var startSeconds: Double
    public var endSeconds: Double
    /// The words' texts joined by single spaces.
    public var text: String
    public var words: [WireWord]

    public init(
        id: String, speaker: String?, name: String?, startSeconds: Double, endSeconds: Double, text: String,
        words: [WireWord]
    ) {
        self.id = id
        self.speaker = speaker
        self.name = name
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.text = text
        self.words = words
    }

    /// The wire id of utterance number `number` ("u12").
    public static func wireID(_ number: UInt64) -> String { "u\(number)" }
}

/// A labelled word in a transcript update.
public struct WireWord: Hashable, Sendable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var speaker: String?
    /// How sure the speaker attribution is, 0…1 (share of the word covered by the speaker's turn,
    /// scaled by the turn's confidence); nil when unlabelled.
    public var speakerConfidence: Double?
    /// The device's ASR confidence, when it gave one.
    public var confidence: Double?
    /// The word's result was final on the device.
    public var isFinal: Bool
    /// The word, as shown here, is committed in PostgreSQL.
    public var isStored: Bool

    public init(
        text: String, startSeconds: Double, endSeconds: Double, speaker: String?, speakerConfidence: Double?,
        confidence: Double?, isFinal: Bool, isStored: Bool
    ) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.speaker = speaker
        self.speakerConfidence = speakerConfidence
        self.confidence = confidence
        self.isFinal = isFinal
        self.isStored = isStored
    }
}

/// An entry of `speakers`.
public struct WireSpeaker: Hashable, Sendable {
    /// Session label, "Speaker N"; N counts up over the conversation's life, also across resumes.
    public var label: String
    /// Display name; equals the label until renamed.
    public var name: String
    /// Set when this speaker was merged into another; its words now carry that speaker's label.
    public var mergedInto: String?

    public init(label: String, name: String, mergedInto: String? = nil) {
        self.label = label
        self.name = name
        self.mergedInto = mergedInto
    }
}

/// Payload of `error`.
public struct WireError: Hashable, Sendable {
    public var code: ProtocolErrorCode
    public var message: String
    /// True when the server closes the connection right after this frame.
    public var fatal: Bool
    /// Set only by `ServerMessageDecoder`, for a code this version does not know (a newer server's;
    /// codes may be added): the code as written, `code` then being `internal_error`.
    public var unknownCode: String?

    /// The code as it stands on the wire.
    public var codeName: String { unknownCode ?? code.rawValue }

    public init(code: ProtocolErrorCode, message: String, fatal: Bool) {
        self.code = code
        self.message = message
        self.fatal = fatal
    }

    public init(_ error: ProtocolError, fatal: Bool) {
        self.init(code: error.code, message: error.message, fatal: fatal)
    }
}
