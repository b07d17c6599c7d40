/// Payload of `stats`: what a session measured about itself, sent once at finalize just after the
/// final transcript. It is what the PRD's developer settings show (latency, speakers found) and what
/// `speakersync eval` scores; a device that does not need it ignores the message.
public struct SessionStats: Hashable, Sendable {
    /// Audio received in this session (seconds), not counting earlier sessions of the conversation.
    public var audioSeconds: Double
    public var wordCount: Int
    public var unlabelledWordCount: Int
    /// Active (not merged) speakers of the conversation.
    public var speakerCount: Int
    /// Per word: seconds from the moment both its audio and its `words` message had reached the
    /// server until the first transcript update that gave it a speaker. Words never labelled are absent.
    public var firstLabelLatenciesSeconds: [Double]
    /// Per word: seconds from the same moment until the update that gave it the speaker it ended with.
    public var finalLabelLatenciesSeconds: [Double]
    /// Provider processing time of each binary audio frame (seconds); empty for providers without audio.
    public var chunkProcessingSeconds: [Double]
    /// Total provider processing time over `audioSeconds`; nil when no audio was processed.
    public var realTimeFactor: Double?
    /// The turns as the device first saw them: each stretch of time labelled by the first turns
    /// published over it, with the label it had then.
    public var liveTurns: [WireTurn]
    /// The conversation's turns at the end, with their current labels.
    public var finalTurns: [WireTurn]

    public init(audioSeconds: Double, wordCount: Int, unlabelledWordCount: Int, speakerCount: Int,
                firstLabelLatenciesSeconds: [Double], finalLabelLatenciesSeconds: [Double],
                chunkProcessingSeconds: [Double], realTimeFactor: Double?, liveTurns: [WireTurn], finalTurns: [WireTurn]) {
        self.audioSeconds = audioSeconds
        self.wordCount = wordCount
        self.unlabelledWordCount = unlabelledWordCount
        self.speakerCount = speakerCount
        self.firstLabelLatenciesSeconds = firstLabelLatenciesSeconds
        self.finalLabelLatenciesSeconds = finalLabelLatenciesSeconds
        self.chunkProcessingSeconds = chunkProcessingSeconds
        self.realTimeFactor = realTimeFactor
        self.liveTurns = liveTurns
        self.finalTurns = finalTurns
    }
}

/// A speaker turn on the conversation timeline, as reported in `stats`.
public struct WireTurn: Hashable, Sendable {
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double

    public init(speaker: String, startSeconds: Double, endSeconds: Double) {
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}
