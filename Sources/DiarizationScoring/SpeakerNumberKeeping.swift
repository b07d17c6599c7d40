/// Whether the people a session showed under a number of their own live still have that number at the
/// end: "speakers that do not stay the same person" measured as a device user meets it. DER cannot see
/// it: it maps labels to people afresh for each scoring, so a session that showed its first voice as
/// "Speaker 1" for twenty seconds and then renamed her "Speaker 2" at finalize scores the same as one
/// that kept her name.
///
/// How: the reference people in order of their first words. Each is introduced under the live label that
/// covers most of their first `introductionSeconds` of speech alone (no other reference speaker talking).
/// A label an earlier person was introduced under is not theirs (live folded them into that person), so
/// they are not counted. A person introduced under a label of their own keeps it when the final label
/// covering most of their speech alone is that label. Pure.
public struct SpeakerNumberKeeping: Sendable, Hashable {
    /// People introduced live under a label no earlier person had.
    public var introducedCount: Int
    /// Of them, those whose final label is still that label.
    public var keptCount: Int

    public init(introducedCount: Int, keptCount: Int) {
        self.introducedCount = introducedCount
        self.keptCount = keptCount
    }

    /// - Parameters:
    ///   - uem: the scored region; nil takes all of the reference.
    ///   - introductionSeconds: how much of a person's first speech alone decides the label they were
    ///     introduced under (two seconds: a sentence's first words, a few diarizer frames).
    public init(reference: [SpeakerSegment], liveTurns: [SpeakerSegment], finalTurns: [SpeakerSegment],
                uem: [TimeSpan]? = nil, introductionSeconds: Double = 2) {
        let overlap = IntervalSet.overlapRegions(of: reference.compactMap(ScoredRegion.span))
        let region = uem.map { IntervalSet(union: $0) }
        var alone: [(speaker: String, spans: IntervalSet)] = []
        for speaker in Set(reference.map(\.speaker)) {
            var spans = IntervalSet(union: reference.filter { $0.speaker == speaker }.compactMap(ScoredRegion.span)).subtracting(overlap)
            if let region { spans = spans.subtracting(spans.subtracting(region)) }
            if !spans.isEmpty { alone.append((speaker, spans)) }
        }
        alone.sort { ($0.spans.spans[0].startSeconds, $0.speaker) < ($1.spans.spans[0].startSeconds, $1.speaker) }
        var claimed = Set<String>()
        var introduced = 0, kept = 0
        for person in alone {
            guard let label = Self.label(covering: Self.first(introductionSeconds, of: person.spans.spans), in: liveTurns),
                  claimed.insert(label).inserted
            else { continue }
            introduced += 1
            if Self.label(covering: person.spans.spans, in: finalTurns) == label { kept += 1 }
        }
        introducedCount = introduced
        keptCount = kept
    }

    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(introducedCount: lhs.introducedCount + rhs.introducedCount, keptCount: lhs.keptCount + rhs.keptCount)
    }

    public static let zero = Self(introducedCount: 0, keptCount: 0)

    /// The first `seconds` of sorted, disjoint spans.
    static func first(_ seconds: Double, of spans: [TimeSpan]) -> [TimeSpan] {
        var left = seconds
        var result: [TimeSpan] = []
        for span in spans where left > segmentPrecisionSeconds {
            let end = Swift.min(span.endSeconds, span.startSeconds + left)
            result.append(TimeSpan(startSeconds: span.startSeconds, endSeconds: end))
            left -= end - span.startSeconds
        }
        return result
    }

    /// The label whose turns share the most time with `spans` (ties: the lower label, so the figure does
    /// not depend on the turns' order); nil when no turn touches them.
    static func label(covering spans: [TimeSpan], in turns: [SpeakerSegment]) -> String? {
        var shared: [String: Double] = [:]
        for turn in turns {
            for span in spans {
                let seconds = Swift.min(span.endSeconds, turn.endSeconds) - Swift.max(span.startSeconds, turn.startSeconds)
                if seconds > segmentPrecisionSeconds { shared[turn.speaker, default: 0] += seconds }
            }
        }
        return shared.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
