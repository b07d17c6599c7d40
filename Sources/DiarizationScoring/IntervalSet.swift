/// Below this many seconds a stretch of time counts as empty, as in pyannote.core's `Segment`
/// (1 μs), so that floating-point slivers left by collars never become scored speech.
let segmentPrecisionSeconds = 1e-6

/// Sorted, disjoint, non-touching spans: the set algebra behind UEMs, collars and overlap regions.
struct IntervalSet: Sendable, Equatable {
    private(set) var spans: [TimeSpan]

    /// The union of any spans; empty and non-finite ones are dropped.
    init<S: Sequence>(union input: S) where S.Element == TimeSpan {
        let sorted = input
            .filter { $0.startSeconds.isFinite && $0.endSeconds.isFinite && $0.endSeconds - $0.startSeconds > segmentPrecisionSeconds }
            .sorted { $0.startSeconds < $1.startSeconds }
        var merged: [TimeSpan] = []
        for span in sorted {
            if let last = merged.last, span.startSeconds - last.endSeconds <= segmentPrecisionSeconds {
                merged[merged.count - 1].endSeconds = Swift.max(last.endSeconds, span.endSeconds)
            } else {
                merged.append(span)
            }
        }
        spans = merged
    }

    var isEmpty: Bool { spans.isEmpty }

    /// The time in `self` that is not in `removed`; pieces of a microsecond or less are dropped.
    func subtracting(_ removed: IntervalSet) -> IntervalSet {
        var result: [TimeSpan] = []
        var cut = 0
        for span in spans {
            var start = span.startSeconds
            while cut < removed.spans.count, removed.spans[cut].endSeconds <= start { cut += 1 }
            var index = cut
            while index < removed.spans.count, removed.spans[index].startSeconds < span.endSeconds {
                let hole = removed.spans[index]
                if hole.startSeconds - start > segmentPrecisionSeconds {
                    result.append(TimeSpan(startSeconds: start, endSeconds: hole.startSeconds))
                }
                start = Swift.max(start, hole.endSeconds)
                index += 1
            }
            if span.endSeconds - start > segmentPrecisionSeconds {
                result.append(TimeSpan(startSeconds: start, endSeconds: span.endSeconds))
            }
        }
        return IntervalSet(disjoint: result)
    }

    /// Where at least two of the given spans overlap (a speaker overlapping their own turn counts too).
    static func overlapRegions(of input: [TimeSpan]) -> IntervalSet {
        var events: [(time: Double, delta: Int)] = []
        events.reserveCapacity(input.count * 2)
        for span in input {
            events.append((span.startSeconds, 1))
            events.append((span.endSeconds, -1))
        }
        events.sort { $0.time < $1.time }
        var regions: [TimeSpan] = []
        var depth = 0
        var index = 0
        while index < events.count {
            let time = events[index].time
            while index < events.count, events[index].time == time {
                depth += events[index].delta
                index += 1
            }
            guard index < events.count, depth >= 2 else { continue }
            regions.append(TimeSpan(startSeconds: time, endSeconds: events[index].time))
        }
        return IntervalSet(union: regions)
    }

    private init(disjoint spans: [TimeSpan]) { self.spans = spans }
}
