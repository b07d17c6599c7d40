/// What is said in a synthetic meeting, by whom, in which order. Timing is decided at synthesis.
public struct MeetingScript: Sendable, Hashable, Codable {
    public var speakers: [MeetingSpeaker]
    public var turns: [MeetingTurn]

    public init(speakers: [MeetingSpeaker], turns: [MeetingTurn]) {
        self.speakers = speakers
        self.turns = turns
    }
}

public struct MeetingSpeaker: Sendable, Hashable, Codable {
    /// The truth label written to RTTM and words JSON (e.g. "spk1").
    public var id: String
    public var voice: VoiceSpec

    public init(id: String, voice: VoiceSpec) {
        self.id = id
        self.voice = voice
    }
}

/// One speaker's uninterrupted sentence.
public struct MeetingTurn: Sendable, Hashable, Codable {
    public var speaker: String
    public var words: [String]
    /// Silence before this turn starts, measured from the end of the previous turn; negative makes the
    /// turn start before the previous one ends (overlapped speech). Nil: drawn from `SynthConfig`.
    public var pauseBeforeSeconds: Double?
    /// A listener's short reply ("yeah", "right") said over the last regular turn without taking the
    /// floor: it starts inside that turn and the next regular turn is timed from that turn's end, as
    /// if it had not been said. Real meetings are full of them, and they are overlapped speech of
    /// people who may never talk alone.
    public var isBackchannel: Bool

    public init(speaker: String, words: [String], pauseBeforeSeconds: Double? = nil, isBackchannel: Bool = false) {
        self.speaker = speaker
        self.words = words
        self.pauseBeforeSeconds = pauseBeforeSeconds
        self.isBackchannel = isBackchannel
    }

    private enum CodingKeys: String, CodingKey {
        case speaker, words, pauseBeforeSeconds, isBackchannel = "backchannel"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        speaker = try container.decode(String.self, forKey: .speaker)
        words = try container.decode([String].self, forKey: .words)
        pauseBeforeSeconds = try container.decodeIfPresent(Double.self, forKey: .pauseBeforeSeconds)
        isBackchannel = try container.decodeIfPresent(Bool.self, forKey: .isBackchannel) ?? false
    }

    /// `backchannel` is written only when true, so scripts without any read and write as before.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(speaker, forKey: .speaker)
        try container.encode(words, forKey: .words)
        try container.encodeIfPresent(pauseBeforeSeconds, forKey: .pauseBeforeSeconds)
        if isBackchannel { try container.encode(true, forKey: .isBackchannel) }
    }
}

/// Backchannels in a generated script (`MeetingScript.generate`).
public struct BackchannelPlan: Sendable, Hashable {
    /// Probability that a regular turn gets one backchannel said over it.
    public var probability: Double
    /// Speakers added to the meeting who only ever backchannel (heard only over others); with none,
    /// each backchannel is said by one of the other participants.
    public var listenerCount: Int
    /// A backchannel's words: one or two of these.
    public var words: [String]

    public static let replies = ["yeah", "yes", "right", "okay", "sure", "exactly", "true", "really", "fine", "good"]

    public init(probability: Double, listenerCount: Int = 0, words: [String] = BackchannelPlan.replies) {
        self.probability = probability
        self.listenerCount = listenerCount
        self.words = words
    }
}
