/// DER, JER and speaker counts of a set of files, as a scoring command prints them.
public struct ScoreReport: Sendable {
    public struct FileScore: Sendable {
        public var fileID: String
        public var diarizationError: DERComponents
        public var jaccardError: JERResult
        public var speakerCount: SpeakerCountError
    }

    /// One entry per reference file, sorted by file id.
    public var files: [FileScore]
    /// Seconds summed over files: its `errorRate` is the corpus DER, which weighs files by speech.
    public var total: DERComponents
    /// JER over every reference speaker of every file, as pyannote accumulates it.
    public var jaccardErrorRate: Double
    /// Reference files with no hypothesis turns (scored as all missed).
    public var filesWithoutHypothesis: [String]
    /// Hypothesis files absent from the reference (not scored).
    public var unknownHypothesisFiles: [String]

    /// - Parameter uem: scored regions per file; a file missing from it (or a nil map) is scored from its
    ///   first to its last turn.
    public init(
        reference: [String: [SpeakerSegment]], hypothesis: [String: [SpeakerSegment]],
        uem: [String: [TimeSpan]]?, config: DERConfig = .default
    ) {
        files = reference.keys.sorted().map { fileID in
            let referenceTurns = reference[fileID] ?? []
            let hypothesisTurns = hypothesis[fileID] ?? []
            let spans = uem?[fileID]
            let region = ScoredRegion.compute(
                reference: referenceTurns, hypothesis: hypothesisTurns, uem: spans, config: config)
            let tally = SpeakerTally(reference: referenceTurns, hypothesis: hypothesisTurns, region: region)
            return FileScore(
                fileID: fileID,
                diarizationError: DiarizationErrorRate.score(tally),
                jaccardError: JaccardErrorRate.score(tally),
                speakerCount: SpeakerCountError(reference: referenceTurns, hypothesis: hypothesisTurns, uem: spans))
        }
        total = files.reduce(DERComponents.zero) { $0 + $1.diarizationError }
        total.mapping = [:]
        jaccardErrorRate = JERResult.pooled(files.map(\.jaccardError))
        filesWithoutHypothesis = files.map(\.fileID).filter { (hypothesis[$0] ?? []).isEmpty }
        unknownHypothesisFiles = hypothesis.keys.filter { reference[$0] == nil }.sorted()
    }
}
