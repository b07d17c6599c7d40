/// How a diarization is scored, with pyannote.metrics' conventions.
public struct DERConfig: Sendable, Hashable {
    /// Total width of the forgiveness collar centred on every reference turn boundary: the region
    /// `boundary ± collarSeconds / 2` is removed from scoring (pyannote's `collar`). NIST md-eval's
    /// `-c` is the half-width, so md-eval `-c 0.25` equals `collarSeconds: 0.5`.
    /// Non-finite or negative values act as 0.
    public var collarSeconds: Double
    /// Remove from scoring every region where the reference has two or more turns at once.
    public var skipOverlap: Bool

    public init(collarSeconds: Double = 0, skipOverlap: Bool = false) {
        self.collarSeconds = collarSeconds
        self.skipOverlap = skipOverlap
    }

    /// No collar, overlapped speech scored: the strictest and most common setting.
    public static let `default` = DERConfig()

    var effectiveCollarSeconds: Double { collarSeconds.isFinite && collarSeconds > 0 ? collarSeconds : 0 }
}
