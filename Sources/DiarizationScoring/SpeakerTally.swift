/// What DER and JER need from one file, gathered in a single sweep over the sorted turn boundaries
/// inside the scored region (O(n log n) for the sort; per stretch, work in the speakers active there).
///
/// Counts are multiplicities, as pyannote.core keeps them: a speaker with two overlapping turns is
/// counted twice where they overlap. Matrices are indexed `[hypothesis * referenceCount + reference]`.
struct SpeakerTally {
    let referenceSpeakers: [String]
    let hypothesisSpeakers: [String]

    /// Σ duration × number of reference turns.
    var referenceSeconds = 0.0
    /// Σ duration × max(0, reference turns − hypothesis turns).
    var missedSeconds = 0.0
    /// Σ duration × max(0, hypothesis turns − reference turns).
    var falseAlarmSeconds = 0.0
    /// Σ duration × min(reference turns, hypothesis turns): the time that is either correct or confused.
    var pairedSeconds = 0.0
    /// Σ duration × (hypothesis turns of h) × (reference turns of r): pyannote's co-occurrence matrix.
    var cooccurrence: [Double]
    /// Σ duration × min(turns of h, turns of r): the correct time if h is mapped to r.
    var matchedSeconds: [Double]
    /// Time where both h and r speak (each at least once).
    var jointSeconds: [Double]
    /// Time each speaker speaks, inside the scored region.
    var referencePresenceSeconds: [Double]
    var hypothesisPresenceSeconds: [Double]

    init(reference: [SpeakerSegment], hypothesis: [SpeakerSegment], region: IntervalSet) {
        var referenceIndex: [String: Int] = [:]
        var hypothesisIndex: [String: Int] = [:]
        var referenceNames: [String] = []
        var hypothesisNames: [String] = []

        enum Kind { case reference, hypothesis, region }
        var events: [(time: Double, kind: Kind, index: Int, delta: Int)] = []
        events.reserveCapacity(2 * (reference.count + hypothesis.count + region.spans.count))
        for segment in reference {
            guard let span = ScoredRegion.span(segment) else { continue }
            let index = referenceIndex[segment.speaker] ?? {
                referenceNames.append(segment.speaker)
                referenceIndex[segment.speaker] = referenceNames.count - 1
                return referenceNames.count - 1
            }()
            events.append((span.startSeconds, .reference, index, 1))
            events.append((span.endSeconds, .reference, index, -1))
        }
        for segment in hypothesis {
            guard let span = ScoredRegion.span(segment) else { continue }
            let index = hypothesisIndex[segment.speaker] ?? {
                hypothesisNames.append(segment.speaker)
                hypothesisIndex[segment.speaker] = hypothesisNames.count - 1
                return hypothesisNames.count - 1
            }()
            events.append((span.startSeconds, .hypothesis, index, 1))
            events.append((span.endSeconds, .hypothesis, index, -1))
        }
        for span in region.spans {
            events.append((span.startSeconds, .region, 0, 1))
            events.append((span.endSeconds, .region, 0, -1))
        }
        events.sort { $0.time < $1.time }

        referenceSpeakers = referenceNames
        hypothesisSpeakers = hypothesisNames
        let r = referenceNames.count
        let h = hypothesisNames.count
        cooccurrence = Array(repeating: 0, count: r * h)
        matchedSeconds = Array(repeating: 0, count: r * h)
        jointSeconds = Array(repeating: 0, count: r * h)
        referencePresenceSeconds = Array(repeating: 0, count: r)
        hypothesisPresenceSeconds = Array(repeating: 0, count: h)

        var referenceTurns = ActiveCounts(size: r)
        var hypothesisTurns = ActiveCounts(size: h)
        var inRegion = 0
        var position = 0
        while position < events.count {
            let time = events[position].time
            while position < events.count, events[position].time == time {
                let event = events[position]
                switch event.kind {
                case .reference: referenceTurns.add(event.index, event.delta)
                case .hypothesis: hypothesisTurns.add(event.index, event.delta)
                case .region: inRegion += event.delta
                }
                position += 1
            }
            guard position < events.count, inRegion > 0 else { continue }
            let duration = events[position].time - time
            // pyannote's common timeline has no stretch of a microsecond or less.
            guard duration > segmentPrecisionSeconds else { continue }
            accumulate(duration: duration, reference: referenceTurns, hypothesis: hypothesisTurns)
        }
    }

    private mutating func accumulate(duration: Double, reference: ActiveCounts, hypothesis: ActiveCounts) {
        let referenceTurns = reference.total
        let hypothesisTurns = hypothesis.total
        referenceSeconds += duration * Double(referenceTurns)
        missedSeconds += duration * Double(Swift.max(0, referenceTurns - hypothesisTurns))
        falseAlarmSeconds += duration * Double(Swift.max(0, hypothesisTurns - referenceTurns))
        pairedSeconds += duration * Double(Swift.min(referenceTurns, hypothesisTurns))
        for r in reference.active { referencePresenceSeconds[r] += duration }
        let width = referenceSpeakers.count
        for h in hypothesis.active {
            hypothesisPresenceSeconds[h] += duration
            let hypothesisCount = hypothesis.counts[h]
            for r in reference.active {
                let referenceCount = reference.counts[r]
                let cell = h * width + r
                cooccurrence[cell] += duration * Double(hypothesisCount * referenceCount)
                matchedSeconds[cell] += duration * Double(Swift.min(hypothesisCount, referenceCount))
                jointSeconds[cell] += duration
            }
        }
    }

    /// `cooccurrence` as rows of hypothesis speakers.
    var cooccurrenceByHypothesis: [[Double]] {
        let width = referenceSpeakers.count
        return (0..<hypothesisSpeakers.count).map { h in Array(cooccurrence[(h * width)..<((h + 1) * width)]) }
    }

    /// `cooccurrence` as rows of reference speakers.
    var cooccurrenceByReference: [[Double]] {
        let width = referenceSpeakers.count
        return (0..<referenceSpeakers.count).map { r in
            (0..<hypothesisSpeakers.count).map { h in cooccurrence[h * width + r] }
        }
    }
}

/// Turn counts per speaker and the speakers whose count is not zero, so a stretch costs only its
/// active speakers.
struct ActiveCounts {
    private(set) var counts: [Int]
    private(set) var active: [Int] = []
    private(set) var total = 0

    init(size: Int) { counts = Array(repeating: 0, count: size) }

    mutating func add(_ index: Int, _ delta: Int) {
        let before = counts[index]
        counts[index] += delta
        total += delta
        if before == 0, counts[index] != 0 {
            active.append(index)
        } else if before != 0, counts[index] == 0, let slot = active.firstIndex(of: index) {
            active.swapAt(slot, active.count - 1)
            active.removeLast()
        }
    }
}
