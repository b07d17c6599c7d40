/// Gives reference words (from a transcript without speakers) the speaker of the reference turns,
/// so WDER can be measured against an RTTM.
public enum ReferenceWordLabels {
    /// A word's reference speaker is the one whose reference turn covers the word's midpoint
    /// (start ≤ midpoint < end); if several speakers do, `isOverlapped` is true and the speaker is the one
    /// whose turns cover most of the word (ties: the name first in order); if none, the speaker of the turn
    /// nearest to the word (gap between word and turn, ties: the nearer to the midpoint) within
    /// `toleranceSeconds`, else nil. Words keep their order.
    public static func label(
        _ words: [(text: String, startSeconds: Double, endSeconds: Double)],
        reference: [SpeakerSegment],
        toleranceSeconds: Double = 0.25
    ) -> [ScoredWord] {
        let turns = reference
            .filter { $0.startSeconds.isFinite && $0.endSeconds.isFinite && $0.endSeconds > $0.startSeconds }
            .sorted { $0.startSeconds < $1.startSeconds }
        // Latest end among turns[0...i]: lets a backward scan stop once no earlier turn can reach a time.
        var latestEnd: [Double] = []
        latestEnd.reserveCapacity(turns.count)
        for turn in turns { latestEnd.append(Swift.max(latestEnd.last ?? -.infinity, turn.endSeconds)) }
        let tolerance = toleranceSeconds.isFinite ? Swift.max(0, toleranceSeconds) : 0

        /// Turns with start ≤ time, from the latest start backwards, while any can still end at or after `reach`.
        func scan(startingAtOrBefore time: Double, endingAtOrAfter reach: Double, _ visit: (SpeakerSegment) -> Void) {
            var low = 0, high = turns.count
            while low < high {
                let middle = (low + high) / 2
                if turns[middle].startSeconds <= time { low = middle + 1 } else { high = middle }
            }
            var index = low - 1
            while index >= 0, latestEnd[index] >= reach {
                visit(turns[index])
                index -= 1
            }
        }

        return words.map { word in
            let midpoint = (word.startSeconds + word.endSeconds) / 2
            var cover: [String: Double] = [:]
            scan(startingAtOrBefore: midpoint, endingAtOrAfter: midpoint) { turn in
                guard turn.endSeconds > midpoint else { return }
                let shared = Swift.min(turn.endSeconds, word.endSeconds) - Swift.max(turn.startSeconds, word.startSeconds)
                cover[turn.speaker, default: 0] += Swift.max(0, shared)
            }
            if !cover.isEmpty {
                let best = cover.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!
                return ScoredWord(
                    text: word.text, startSeconds: word.startSeconds, endSeconds: word.endSeconds,
                    speaker: best.key, isOverlapped: cover.count > 1)
            }
            var nearest: (speaker: String, gap: Double, midpointDistance: Double)?
            scan(startingAtOrBefore: word.endSeconds + tolerance, endingAtOrAfter: word.startSeconds - tolerance) { turn in
                let gap = Swift.max(0, turn.startSeconds - word.endSeconds, word.startSeconds - turn.endSeconds)
                let midpointDistance = Swift.max(turn.startSeconds - midpoint, midpoint - turn.endSeconds)
                guard gap <= tolerance else { return }
                if let current = nearest,
                   (current.gap, current.midpointDistance, current.speaker) <= (gap, midpointDistance, turn.speaker) { return }
                nearest = (turn.speaker, gap, midpointDistance)
            }
            return ScoredWord(
                text: word.text, startSeconds: word.startSeconds, endSeconds: word.endSeconds,
                speaker: nearest?.speaker, isOverlapped: false)
        }
    }

    /// Words whose true speakers are known (a synthetic meeting's words file carries them): each word
    /// gets its own speaker, and is overlapped as `label` finds it from the reference turns.
    /// `trueSpeakers` holds one speaker per word, in the words' order.
    public static func label(
        _ words: [(text: String, startSeconds: Double, endSeconds: Double)],
        reference: [SpeakerSegment],
        trueSpeakers: [String]
    ) -> [ScoredWord] {
        precondition(trueSpeakers.count == words.count, "one true speaker per word")
        var labelled = label(words, reference: reference)
        for index in labelled.indices { labelled[index].speaker = trueSpeakers[index] }
        return labelled
    }
}
