/// Tunables of the transcript merge.
public struct MergeConfig: Sendable, Hashable {
    /// A word that no turn overlaps takes the nearest turn whose gap to it is at most this many seconds.
    /// Non-finite or negative values act as 0.
    public var nearestTurnToleranceSeconds: Double
    /// Same-speaker words whose gap is at least this many seconds start a new utterance.
    /// Non-finite or negative values act as 0.
    public var utteranceGapSeconds: Double
    /// Two words that overlap in time by more than this many seconds were said by two different people
    /// (see `TranscriptMerger+SimultaneousWords`). A little above 0 so that recogniser timestamps rounded
    /// to the millisecond, which may touch or cross by a hair, do not count. Non-finite or negative values
    /// act as 0.
    public var simultaneousWordOverlapSeconds: Double
    /// A stretch of simultaneous words longer than this, from the first word's start to the last word's
    /// end, is left to the turns alone: word order says who is who only around where a second voice joins
    /// or leaves, and the stretch bounds how far one word's label can reach. 0 (or non-finite, negative)
    /// turns the simultaneous-word rule off.
    public var simultaneousStretchSeconds: Double
    /// An utterance holds at most this many words; a longer run of one speaker continues in a new
    /// utterance. Every update carries its changed utterances whole, so without a bound one speaker
    /// talking without a pause (or a client sending such words) makes each update, and the server's
    /// memory for it, grow with the whole run. 200 words is over a minute of speech. Values below 1 act as 1.
    public var maxUtteranceWords: Int

    public init(nearestTurnToleranceSeconds: Double = 0.5, utteranceGapSeconds: Double = 1.0,
                simultaneousWordOverlapSeconds: Double = 0.005, simultaneousStretchSeconds: Double = 4.0,
                maxUtteranceWords: Int = 200) {
        self.maxUtteranceWords = maxUtteranceWords
        self.nearestTurnToleranceSeconds = nearestTurnToleranceSeconds
        self.utteranceGapSeconds = utteranceGapSeconds
        self.simultaneousWordOverlapSeconds = simultaneousWordOverlapSeconds
        self.simultaneousStretchSeconds = simultaneousStretchSeconds
    }

    public static let `default` = MergeConfig()

    var effectiveToleranceSeconds: Double {
        nearestTurnToleranceSeconds.isFinite && nearestTurnToleranceSeconds > 0 ? nearestTurnToleranceSeconds : 0
    }

    var effectiveGapSeconds: Double {
        utteranceGapSeconds.isFinite && utteranceGapSeconds > 0 ? utteranceGapSeconds : 0
    }

    var effectiveSimultaneousOverlapSeconds: Double {
        simultaneousWordOverlapSeconds.isFinite && simultaneousWordOverlapSeconds > 0
            ? simultaneousWordOverlapSeconds : 0
    }

    /// nil when the rule is off.
    var effectiveSimultaneousStretchSeconds: Double? {
        simultaneousStretchSeconds.isFinite && simultaneousStretchSeconds > 0 ? simultaneousStretchSeconds : nil
    }
}
