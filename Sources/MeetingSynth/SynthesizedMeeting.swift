/// A word of a synthetic meeting with its exact position on the 16 kHz timeline and who said it.
public struct SynthWord: Sendable, Hashable, Codable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var speaker: String

    public init(text: String, startSeconds: Double, endSeconds: Double, speaker: String) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.speaker = speaker
    }
}

/// A speaker turn: from its first word's start to its last word's end.
public struct SynthTurn: Sendable, Hashable, Codable {
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double

    public init(speaker: String, startSeconds: Double, endSeconds: Double) {
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}

/// Audio plus exact truth. Word and turn times are whole samples divided by `sampleRate`.
public struct SynthesizedMeeting: Sendable {
    public var audio: [Float]
    public var sampleRate: Int
    /// In script order (turn by turn); overlapping turns interleave in time, so sort if you need that.
    public var words: [SynthWord]
    /// In script order, one per script turn.
    public var turns: [SynthTurn]
    public var seed: UInt64

    public init(audio: [Float], sampleRate: Int, words: [SynthWord], turns: [SynthTurn], seed: UInt64) {
        self.audio = audio
        self.sampleRate = sampleRate
        self.words = words
        self.turns = turns
        self.seed = seed
    }

    public var durationSeconds: Double { Double(audio.count) / Double(sampleRate) }
}
