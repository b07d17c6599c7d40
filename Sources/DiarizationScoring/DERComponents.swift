/// The diarization error of one file (or of several, summed), in seconds of speech.
public struct DERComponents: Sendable, Hashable {
    /// Reference speech inside the scored region, counted once per speaker (overlap counts twice).
    public var referenceSeconds: Double
    /// Reference speech with no hypothesis speaker to cover it.
    public var missedSeconds: Double
    /// Hypothesis speech beyond the number of reference speakers at that time.
    public var falseAlarmSeconds: Double
    /// Speech attributed to a speaker other than the one mapped to the reference speaker.
    public var confusionSeconds: Double
    /// Hypothesis speaker → reference speaker, the one-to-one mapping maximising their shared time.
    /// Hypothesis speakers that share no time with any reference speaker are absent.
    public var mapping: [String: String]

    public init(
        referenceSeconds: Double = 0, missedSeconds: Double = 0, falseAlarmSeconds: Double = 0,
        confusionSeconds: Double = 0, mapping: [String: String] = [:]
    ) {
        self.referenceSeconds = referenceSeconds
        self.missedSeconds = missedSeconds
        self.falseAlarmSeconds = falseAlarmSeconds
        self.confusionSeconds = confusionSeconds
        self.mapping = mapping
    }

    public static let zero = DERComponents()

    /// (missed + false alarm + confusion) / reference. With no reference speech it is 0 when nothing
    /// was wrongly detected and 1 otherwise, as in pyannote.metrics.
    public var errorRate: Double {
        let error = missedSeconds + falseAlarmSeconds + confusionSeconds
        guard referenceSeconds > 0 else { return error > 0 ? 1 : 0 }
        return error / referenceSeconds
    }

    /// Reference speech attributed to the right speaker.
    public var correctSeconds: Double { Swift.max(0, referenceSeconds - missedSeconds - confusionSeconds) }

    /// Totals over files: seconds add up (the rate of a sum weighs files by their speech); the mapping
    /// is per file, so the left-hand one is kept.
    public static func + (lhs: DERComponents, rhs: DERComponents) -> DERComponents {
        DERComponents(
            referenceSeconds: lhs.referenceSeconds + rhs.referenceSeconds,
            missedSeconds: lhs.missedSeconds + rhs.missedSeconds,
            falseAlarmSeconds: lhs.falseAlarmSeconds + rhs.falseAlarmSeconds,
            confusionSeconds: lhs.confusionSeconds + rhs.confusionSeconds,
            mapping: lhs.mapping)
    }
}
