/// How a `MeetingScript` becomes audio: timing, noise and how espeak-ng is run.
public struct SynthConfig: Sendable, Equatable {
    /// Silence between consecutive words of one turn, drawn per gap.
    public var intraTurnGapSeconds: ClosedRange<Double>
    /// Silence between turns, drawn per turn unless the turn sets `pauseBeforeSeconds`.
    public var interTurnPauseSeconds: ClosedRange<Double>
    /// Probability that a turn (without its own pause) overlaps the previous one instead.
    public var overlapProbability: Double
    /// How far an overlapping turn starts before the previous turn ends.
    public var overlapSeconds: ClosedRange<Double>
    /// Silence before the first turn and after the last.
    public var leadInSeconds: Double
    public var tailSeconds: Double
    /// Background noise added after mixing; nil for none.
    public var noise: NoiseConfig?
    /// Each voice changing slowly across the meeting; nil for voices that stay as their preset.
    public var timbreDrift: TimbreDrift?
    /// A word's audio is cut to the span where |sample| exceeds
    /// max(`trimFloor`, `trimRelativeToPeak` × the word's peak).
    public var trimFloor: Float
    public var trimRelativeToPeak: Float
    /// espeak-ng executable: a path, or a name looked up in PATH.
    public var espeakExecutable: String
    /// festival executable: a path, or a name looked up in PATH.
    public var festivalExecutable: String
    /// espeak-ng processes run at once (each call is ~10 ms, mostly process start-up).
    public var maxConcurrentProcesses: Int

    public init(intraTurnGapSeconds: ClosedRange<Double> = 0.06 ... 0.12,
                interTurnPauseSeconds: ClosedRange<Double> = 0.3 ... 0.9,
                overlapProbability: Double = 0, overlapSeconds: ClosedRange<Double> = 0.3 ... 0.8,
                leadInSeconds: Double = 0.5, tailSeconds: Double = 0.5, noise: NoiseConfig? = nil,
                trimFloor: Float = 0.003, trimRelativeToPeak: Float = 0.02,
                espeakExecutable: String = "espeak-ng", festivalExecutable: String = "festival",
                maxConcurrentProcesses: Int = 4, timbreDrift: TimbreDrift? = nil) {
        self.intraTurnGapSeconds = intraTurnGapSeconds
        self.interTurnPauseSeconds = interTurnPauseSeconds
        self.overlapProbability = overlapProbability
        self.overlapSeconds = overlapSeconds
        self.leadInSeconds = leadInSeconds
        self.tailSeconds = tailSeconds
        self.noise = noise
        self.timbreDrift = timbreDrift
        self.trimFloor = trimFloor
        self.trimRelativeToPeak = trimRelativeToPeak
        self.espeakExecutable = espeakExecutable
        self.festivalExecutable = festivalExecutable
        self.maxConcurrentProcesses = maxConcurrentProcesses
    }

    public static let `default` = SynthConfig()
}

/// Seeded background noise mixed in at a signal-to-noise ratio measured over the speech samples.
public struct NoiseConfig: Sendable, Equatable {
    public enum Kind: String, Sendable { case white, pink }

    public var kind: Kind
    public var snrDB: Double

    public init(kind: Kind = .pink, snrDB: Double = 20) {
        self.kind = kind
        self.snrDB = snrDB
    }
}
