/// The Jaccard error rate of one file.
public struct JERResult: Sendable, Hashable {
    /// Mean of `perReferenceSpeaker`; 1 when no reference speaker speaks in the scored region
    /// (pyannote.metrics' convention).
    public var errorRate: Double
    /// Reference speaker → 1 − |r ∩ h| / |r ∪ h| with h its mapped hypothesis speaker, or 1 if unmapped.
    public var perReferenceSpeaker: [String: Double]
    /// Reference speaker → hypothesis speaker, one-to-one, maximising co-occurrence.
    public var mapping: [String: String]

    public init(errorRate: Double, perReferenceSpeaker: [String: Double], mapping: [String: String] = [:]) {
        self.errorRate = errorRate
        self.perReferenceSpeaker = perReferenceSpeaker
        self.mapping = mapping
    }

    /// JER over several files, weighing every reference speaker of every file equally, as pyannote
    /// accumulates it.
    public static func pooled(_ results: [JERResult]) -> Double {
        let speakers = results.reduce(0) { $0 + $1.perReferenceSpeaker.count }
        guard speakers > 0 else { return 1 }
        return results.reduce(0.0) { $0 + $1.perReferenceSpeaker.values.reduce(0, +) } / Double(speakers)
    }
}

/// Jaccard error rate (DIHARD II) as pyannote.metrics' `JaccardErrorRate` computes it: unlike DER,
/// every reference speaker weighs the same whatever how long they spoke, and unmapped hypothesis
/// speakers cost nothing. Same scored region (UEM, collar, overlap) as DER.
public enum JaccardErrorRate {
    public static func score(
        reference: [SpeakerSegment], hypothesis: [SpeakerSegment], uem: [TimeSpan]?, config: DERConfig = .default
    ) -> JERResult {
        let region = ScoredRegion.compute(reference: reference, hypothesis: hypothesis, uem: uem, config: config)
        return score(SpeakerTally(reference: reference, hypothesis: hypothesis, region: region))
    }

    static func score(_ tally: SpeakerTally) -> JERResult {
        let assignment = HungarianAssignment.maximize(tally.cooccurrenceByReference)
        let width = tally.referenceSpeakers.count
        var perSpeaker: [String: Double] = [:]
        var mapping: [String: String] = [:]
        for (r, name) in tally.referenceSpeakers.enumerated() where tally.referencePresenceSeconds[r] > 0 {
            guard let h = assignment[r], tally.cooccurrence[h * width + r] > 0 else {
                perSpeaker[name] = 1
                continue
            }
            mapping[name] = tally.hypothesisSpeakers[h]
            let both = tally.jointSeconds[h * width + r]
            let union = tally.referencePresenceSeconds[r] + tally.hypothesisPresenceSeconds[h] - both
            perSpeaker[name] = union > 0 ? Swift.min(1, Swift.max(0, (union - both) / union)) : 1
        }
        let errorRate = perSpeaker.isEmpty ? 1 : perSpeaker.values.reduce(0, +) / Double(perSpeaker.count)
        return JERResult(errorRate: errorRate, perReferenceSpeaker: perSpeaker, mapping: mapping)
    }
}
