/// The time that is scored, computed as pyannote.metrics' `uemify` does: the UEM (or, without one,
/// the span from the first to the last turn of reference and hypothesis together), less collars
/// around every reference boundary, less reference overlap when it is skipped.
enum ScoredRegion {
    static func compute(
        reference: [SpeakerSegment], hypothesis: [SpeakerSegment], uem: [TimeSpan]?, config: DERConfig
    ) -> IntervalSet {
        let referenceSpans = reference.compactMap(Self.span)
        let evaluated: IntervalSet
        if let uem {
            evaluated = IntervalSet(union: uem)
        } else {
            let all = referenceSpans + hypothesis.compactMap(Self.span)
            if let first = all.map(\.startSeconds).min(), let last = all.map(\.endSeconds).max() {
                evaluated = IntervalSet(union: [TimeSpan(startSeconds: first, endSeconds: last)])
            } else {
                evaluated = IntervalSet(union: [])
            }
        }
        var removed: [TimeSpan] = []
        let halfCollar = config.effectiveCollarSeconds / 2
        if halfCollar > 0 {
            for span in referenceSpans {
                for boundary in [span.startSeconds, span.endSeconds] {
                    removed.append(TimeSpan(startSeconds: boundary - halfCollar, endSeconds: boundary + halfCollar))
                }
            }
        }
        if config.skipOverlap {
            removed += IntervalSet.overlapRegions(of: referenceSpans).spans
        }
        return removed.isEmpty ? evaluated : evaluated.subtracting(IntervalSet(union: removed))
    }

    /// The turn as a span, or nil when it holds no time (as pyannote.core drops empty segments).
    static func span(_ segment: SpeakerSegment) -> TimeSpan? {
        guard segment.startSeconds.isFinite, segment.endSeconds.isFinite,
              segment.endSeconds - segment.startSeconds > segmentPrecisionSeconds else { return nil }
        return TimeSpan(startSeconds: segment.startSeconds, endSeconds: segment.endSeconds)
    }
}
