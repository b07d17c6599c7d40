import DiarizationScoring
import Statistics

/// Totals over all recordings, pooled the way the field pools them: DER and JER components summed
/// over files (not averaged per file), WDER counts summed, latency percentiles over all words.
public struct EvalSummary: Sendable {
    public var provider: String
    public var files: [FileEvaluation]

    public init(provider: String, files: [FileEvaluation]) {
        self.provider = provider
        self.files = files
    }

    public var audioSeconds: Double { files.reduce(0) { $0 + $1.audioSeconds } }
    public var finalDER: DERComponents { total(\.finalDER) }
    public var finalDERCollar: DERComponents { total(\.finalDERCollar) }
    public var liveDERCollar: DERComponents { total(\.liveDERCollar) }
    /// Mean of the files' JER weighted by their reference speech.
    public var jer: Double {
        let weight = files.reduce(0) { $0 + $1.finalDER.referenceSeconds }
        return weight == 0 ? 0 : files.reduce(0) { $0 + $1.jer * $1.finalDER.referenceSeconds } / weight
    }
    public var wderRate: Double { rate(files.map(\.wder)) }
    public var wderOutsideOverlapRate: Double { rate(files.map(\.wderOutsideOverlap)) }
    public var overlapWordCount: Int { files.reduce(0) { $0 + $1.overlapWordCount } }
    public var overlapWordsWithATalkingSpeaker: Int { files.reduce(0) { $0 + $1.overlapWordsWithATalkingSpeaker } }
    public var wordCount: Int { files.reduce(0) { $0 + $1.wordCount } }
    public var unlabelledWordCount: Int { files.reduce(0) { $0 + $1.unlabelledWordCount } }
    /// Files whose speaker count matches the reference.
    public var exactSpeakerCountFiles: Int { files.filter { $0.speakers.difference == 0 }.count }
    /// People introduced live under a number of their own, and those who kept it, over all files.
    public var numbersKept: SpeakerNumberKeeping { files.reduce(.zero) { $0 + $1.numbersKept } }
    public var firstLabelLatency: Percentiles { Percentiles(files.flatMap(\.firstLabelLatenciesSeconds)) }
    public var finalLabelLatency: Percentiles { Percentiles(files.flatMap(\.finalLabelLatenciesSeconds)) }
    public var chunkProcessing: Percentiles { Percentiles(files.flatMap(\.chunkProcessingSeconds)) }
    /// Total provider processing over total audio; nil when the provider processed no audio.
    public var realTimeFactor: Double? {
        let processed = files.filter { $0.realTimeFactor != nil }
        guard !processed.isEmpty else { return nil }
        let seconds = processed.reduce(0) { $0 + $1.realTimeFactor! * $1.audioSeconds }
        return seconds / processed.reduce(0) { $0 + $1.audioSeconds }
    }
    public var maxMemoryPerSessionBytes: Int? { files.compactMap(\.memoryPerSessionBytes).max() }

    private func total(_ path: KeyPath<FileEvaluation, DERComponents>) -> DERComponents {
        files.dropFirst().reduce(files.first?[keyPath: path] ?? DERComponents.zero) { $0 + $1[keyPath: path] }
    }

    private func rate(_ results: [WDERResult]) -> Double {
        let aligned = results.reduce(0) { $0 + $1.alignedWordCount }
        return aligned == 0 ? 0 : Double(results.reduce(0) { $0 + $1.mislabelledWordCount }) / Double(aligned)
    }
}
