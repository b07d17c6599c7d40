import DiarizationScoring
import DeterministicRandom

/// The ways a diarization system goes wrong, applied to a reference to make hypotheses whose scores are
/// not obvious: every case is seeded, so a failure can be replayed.
enum HypothesisPerturbation: String, CaseIterable {
    case renamedSpeakers, shiftedBoundaries, swappedLabels, droppedTurns, addedTurns
    case mergedSpeakers, splitSpeakers, oneSpeakerAtATime, empty, combined

    func apply(to reference: [SpeakerSegment], durationSeconds: Double, random: inout SeededRandom) -> [SpeakerSegment] {
        let speakers = Array(Set(reference.map(\.speaker))).sorted()
        switch self {
        case .renamedSpeakers:
            var names = speakers.indices.map { "hyp\($0)" }
            names.shuffle(using: &random)
            let rename = Dictionary(uniqueKeysWithValues: zip(speakers, names))
            return reference.map { SpeakerSegment(speaker: rename[$0.speaker]!, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        case .shiftedBoundaries:
            return reference.compactMap { turn in
                let start = max(0, turn.startSeconds + random.uniform(-0.4...0.4))
                let end = min(durationSeconds + 0.5, turn.endSeconds + random.uniform(-0.4...0.4))
                return end > start ? SpeakerSegment(speaker: turn.speaker, startSeconds: start, endSeconds: end) : nil
            }
        case .swappedLabels:
            return reference.map { turn in
                guard random.chance(0.35) else { return turn }
                let others = speakers.filter { $0 != turn.speaker }
                let speaker = others.isEmpty ? "intruder" : others[random.index(others.count)]
                return SpeakerSegment(speaker: speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
            }
        case .droppedTurns:
            let kept = reference.filter { _ in random.chance(0.6) }
            return kept.isEmpty ? Array(reference.prefix(1)) : kept
        case .addedTurns:
            var turns = reference
            for _ in 0..<(3 + random.index(4)) {
                let start = random.uniform(0...(durationSeconds - 1))
                let end = min(durationSeconds, start + random.uniform(0.2...3))
                let speaker = random.chance(0.5) || speakers.isEmpty ? "extra\(random.index(2))" : speakers[random.index(speakers.count)]
                turns.append(SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end))
            }
            return turns
        case .mergedSpeakers:
            // The merged turns may overlap each other: pyannote then counts that speaker twice there.
            guard speakers.count >= 2 else { return reference }
            let into = speakers[random.index(speakers.count)]
            let from = speakers.filter { $0 != into }[random.index(speakers.count - 1)]
            return reference.map { turn in
                SpeakerSegment(speaker: turn.speaker == from ? into : turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
            }
        case .splitSpeakers:
            return reference.flatMap { turn -> [SpeakerSegment] in
                let cut = turn.startSeconds + (turn.endSeconds - turn.startSeconds) * random.uniform(0.2...0.8)
                return [
                    SpeakerSegment(speaker: turn.speaker + "_a", startSeconds: turn.startSeconds, endSeconds: cut),
                    SpeakerSegment(speaker: turn.speaker + "_b", startSeconds: cut, endSeconds: turn.endSeconds),
                ]
            }
        case .oneSpeakerAtATime:
            return Self.withoutOverlap(reference)
        case .empty:
            return []
        case .combined:
            var turns = reference
            for step in [Self.shiftedBoundaries, .swappedLabels, .droppedTurns, .addedTurns] {
                turns = step.apply(to: turns, durationSeconds: durationSeconds, random: &random)
            }
            return turns
        }
    }

    /// At every moment only the speaker whose turn started last, as single-stream systems output.
    private static func withoutOverlap(_ turns: [SpeakerSegment]) -> [SpeakerSegment] {
        let boundaries = Array(Set(turns.flatMap { [$0.startSeconds, $0.endSeconds] })).sorted()
        var result: [SpeakerSegment] = []
        for (start, end) in zip(boundaries, boundaries.dropFirst()) {
            let middle = (start + end) / 2
            guard let speaker = turns
                .filter({ $0.startSeconds <= middle && middle < $0.endSeconds })
                .max(by: { ($0.startSeconds, $0.speaker) < ($1.startSeconds, $1.speaker) })?.speaker else { continue }
            if let last = result.last, last.speaker == speaker, last.endSeconds == start {
                result[result.count - 1].endSeconds = end
            } else {
                result.append(SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end))
            }
        }
        return result
    }
}
