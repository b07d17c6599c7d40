/// Tunables of the transcript merge.
public struct MergeConfig: Sendable, Hashable {
    /// A word that no turn overlaps takes the nearest turn whose gap to it is at most this many seconds.
    /// Non-finite or negative values act as 0.
    public var nearestTurnToleranceSeconds: Double
    /// Same-speaker words whose gap is at least this many seconds start a new utterance.
    /// Non-finite or negative values act as 0.
    public var utteranceGapSeconds: Double

    public init(nearestTurnToleranceSeconds: Double = 0.5, utteranceGapSeconds: Double = 1.0) {
        self.nearestTurnToleranceSeconds = nearestTurnToleranceSeconds
        self.utteranceGapSeconds = utteranceGapSeconds
    }

    public static let `default` = MergeConfig()

    var effectiveToleranceSeconds: Double {
        nearestTurnToleranceSeconds.isFinite && nearestTurnToleranceSeconds > 0 ? nearestTurnToleranceSeconds : 0
    }

    var effectiveGapSeconds: Double {
        utteranceGapSeconds.isFinite && utteranceGapSeconds > 0 ? utteranceGapSeconds : 0
    }
}
