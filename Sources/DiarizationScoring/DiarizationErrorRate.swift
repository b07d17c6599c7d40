/// Diarization error rate as pyannote.metrics' `DiarizationErrorRate` computes it.
///
/// At every instant of the scored region, with `nref` reference and `nhyp` hypothesis speakers:
/// missed = max(0, nref − nhyp), false alarm = max(0, nhyp − nref), confusion = min(nref, nhyp) −
/// correct, where correct counts reference speakers whose mapped hypothesis speaker also speaks.
/// The mapping is the one-to-one assignment (Hungarian) maximising total co-occurrence.
public enum DiarizationErrorRate {
    /// - Parameter uem: the scored regions; nil scores from the first to the last turn of reference and
    ///   hypothesis together, as pyannote does (with a warning) when no UEM is given.
    public static func score(
        reference: [SpeakerSegment], hypothesis: [SpeakerSegment], uem: [TimeSpan]?, config: DERConfig = .default
    ) -> DERComponents {
        let region = ScoredRegion.compute(reference: reference, hypothesis: hypothesis, uem: uem, config: config)
        return score(SpeakerTally(reference: reference, hypothesis: hypothesis, region: region))
    }

    static func score(_ tally: SpeakerTally) -> DERComponents {
        let assignment = HungarianAssignment.maximize(tally.cooccurrenceByHypothesis)
        let width = tally.referenceSpeakers.count
        var mapping: [String: String] = [:]
        var correctSeconds = 0.0
        for (h, r) in assignment.enumerated() {
            guard let r, tally.cooccurrence[h * width + r] > 0 else { continue }
            mapping[tally.hypothesisSpeakers[h]] = tally.referenceSpeakers[r]
            correctSeconds += tally.matchedSeconds[h * width + r]
        }
        return DERComponents(
            referenceSeconds: tally.referenceSeconds,
            missedSeconds: tally.missedSeconds,
            falseAlarmSeconds: tally.falseAlarmSeconds,
            confusionSeconds: Swift.max(0, tally.pairedSeconds - correctSeconds),
            mapping: mapping)
    }
}
