/// The speaker chosen for one word and how sure the merger is of it.
struct SpeakerAssignment: Equatable {
    var speaker: String?
    var confidence: Double?

    static let unlabelled = SpeakerAssignment(speaker: nil, confidence: nil)

    /// Confidence of a label taken from the nearest turn at gap `distance` within `tolerance`:
    /// 0.5 × (1 − distance / (2 × tolerance)), i.e. from 0.5 (touching) down to 0.25 (at the tolerance).
    /// Always below any overlap label of a fully covered word, and never 0, so a consumer can tell
    /// "guessed from a neighbour" (≤ 0.5) from "inside a turn" apart for short words too.
    static func nearestConfidence(distance: Double, tolerance: Double) -> Double {
        guard tolerance > 0 else { return 0.5 }
        return 0.5 * (1 - 0.5 * min(1, max(0, distance / tolerance)))
    }
}

extension TranscriptMerger {
    /// A turn near a word without overlapping it: its gap to the word, confidence, speaker and id.
    typealias NearestTurn = (distance: Double, confidence: Double, speaker: String, id: String)

    /// The nearer turn wins; ties go to the higher confidence, then the smaller speaker, then the smaller id.
    static func prefers(_ candidate: NearestTurn, over current: NearestTurn) -> Bool {
        candidate.distance != current.distance ? candidate.distance < current.distance
            : candidate.confidence != current.confidence ? candidate.confidence > current.confidence
            : candidate.speaker != current.speaker ? candidate.speaker < current.speaker
            : candidate.id < current.id
    }

    /// Chooses the speaker of a word spanning [start, end] from the current turns.
    ///
    /// - Overlap: each speaker scores the sum of its turns' overlap with the word (seconds). The highest
    ///   score wins; ties go to the speaker with the higher turn confidence (nil counts as 0), then to the
    ///   lexicographically smaller speaker. Confidence = winning overlap / word duration, clamped to [0, 1].
    /// - A zero-duration word is a point: it overlaps a turn when start ≤ point < end (score 1 per turn,
    ///   confidence 1).
    /// - No overlap: the turn with the smallest gap (≤ tolerance) wins, ties by higher confidence, then smaller
    ///   speaker, then smaller turn id; confidence from `SpeakerAssignment.nearestConfidence`.
    /// - Otherwise unlabelled, except while `labelStrandedWords` runs (the session's end): then the nearest
    ///   turn at any distance.
    ///
    /// Cost: O(log T + turns starting in [start − tolerance − longest turn, end + tolerance]).
    func assignment(start: Double, end: Double) -> SpeakerAssignment {
        let tolerance = config.effectiveToleranceSeconds
        let isPoint = end <= start
        var index = turnList.firstIndex(startingAtOrAfter: start - tolerance - maxTurnDurationSeconds)
        var scores = SpeakerScores()
        var nearest: NearestTurn?
        let limit = end + tolerance
        while index < turnList.count {
            let turn = turnList[index]
            index += 1
            if turn.startSeconds > limit { break }
            let overlap: Double
            if isPoint {
                overlap = (turn.startSeconds <= start && start < turn.endSeconds) ? 1 : 0
            } else {
                overlap = min(end, turn.endSeconds) - max(start, turn.startSeconds)
            }
            let turnConfidence = turn.confidence ?? 0
            if overlap > 0 {
                scores.add(speaker: turn.speaker, overlap: overlap, confidence: turnConfidence)
                continue
            }
            guard scores.isEmpty else { continue }
            let distance = max(turn.startSeconds - end, start - turn.endSeconds, 0)
            guard distance <= tolerance else { continue }
            let candidate = (distance, turnConfidence, turn.speaker, turn.id)
            if nearest.map({ Self.prefers(candidate, over: $0) }) ?? true { nearest = candidate }
        }
        if let best = scores.best {
            let confidence = isPoint ? 1 : min(1, max(0, best.overlap / (end - start)))
            return SpeakerAssignment(speaker: best.speaker, confidence: confidence)
        }
        if let nearest {
            return SpeakerAssignment(
                speaker: nearest.speaker,
                confidence: SpeakerAssignment.nearestConfidence(distance: nearest.distance, tolerance: tolerance)
            )
        }
        return strandedAssignment(start: start, end: end) ?? .unlabelled
    }
}

/// Overlap per speaker for one word. Almost every word meets one or two speakers, so the first two live
/// inline and only a crowded word allocates.
struct SpeakerScores {
    typealias Score = (speaker: String, overlap: Double, confidence: Double)
    private var first: Score?
    private var second: Score?
    private var more: [Score] = []

    var isEmpty: Bool { first == nil }

    mutating func add(speaker: String, overlap: Double, confidence: Double) {
        func merge(_ score: inout Score) {
            score.overlap += overlap
            score.confidence = max(score.confidence, confidence)
        }
        if first == nil { first = (speaker, overlap, confidence); return }
        if first!.speaker == speaker { merge(&first!); return }
        if second == nil { second = (speaker, overlap, confidence); return }
        if second!.speaker == speaker { merge(&second!); return }
        if let slot = more.firstIndex(where: { $0.speaker == speaker }) {
            merge(&more[slot])
        } else {
            more.append((speaker, overlap, confidence))
        }
    }

    /// Most overlap; ties: higher confidence, then the smaller speaker.
    var best: Score? {
        guard var best = first else { return nil }
        func consider(_ score: Score) {
            let better = score.overlap != best.overlap ? score.overlap > best.overlap
                : score.confidence != best.confidence ? score.confidence > best.confidence
                : score.speaker < best.speaker
            if better { best = score }
        }
        if let second { consider(second) }
        for score in more { consider(score) }
        return best
    }
}
