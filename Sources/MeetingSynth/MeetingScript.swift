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

    public init(speaker: String, words: [String], pauseBeforeSeconds: Double? = nil) {
        self.speaker = speaker
        self.words = words
        self.pauseBeforeSeconds = pauseBeforeSeconds
    }
}
