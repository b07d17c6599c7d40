/// Gives a new diarization's speakers the labels an earlier one used for the same voices, by how long
/// they overlap in time: the offline pass at finalize against the live turns (sherpa-onnx), and each
/// window of a provider that re-diarizes a sliding window against the turns already published
/// (Falcon). Labels then stay with the same person across revisions; a voice the earlier turns never
/// had gets a new label, above every label in use.
///
/// One to one, greedily by overlap: the pair that shares the most time first. A new speaker overlapping
/// an old one by less than `minimumOverlapSeconds` is not matched to it. Pure.
public enum SpeakerRelabelling {
    public struct Span: Sendable, Equatable {
        public var speaker: Int
        public var startSeconds: Double
        public var endSeconds: Double

        public init(speaker: Int, startSeconds: Double, endSeconds: Double) {
            self.speaker = speaker
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
        }
    }

    /// New speaker → label. `reserved`: labels that must not be given to an unmatched speaker (known
    /// speakers' indices, labels in use elsewhere); fresh labels start above all of them and of `earlier`'s.
    public static func labels(for new: [Span], earlier: [Span], reserved: Set<Int> = [], minimumOverlapSeconds: Double = 0.1) -> [Int: Int] {
        var overlap: [Int: [Int: Double]] = [:]
        // Both lists are short (a session's turns); a sweep is not needed.
        for n in new {
            for e in earlier {
                let shared = min(n.endSeconds, e.endSeconds) - max(n.startSeconds, e.startSeconds)
                if shared > 0 { overlap[n.speaker, default: [:]][e.speaker, default: 0] += shared }
            }
        }
        var pairs: [(new: Int, old: Int, seconds: Double)] = []
        for (n, row) in overlap {
            for (o, seconds) in row where seconds >= minimumOverlapSeconds { pairs.append((n, o, seconds)) }
        }
        // Most overlap first; ties in a fixed order, so the result never depends on dictionary order.
        pairs.sort { ($0.seconds, -$0.new, -$0.old) > ($1.seconds, -$1.new, -$1.old) }
        var result: [Int: Int] = [:]
        var taken: Set<Int> = []
        for pair in pairs where result[pair.new] == nil && !taken.contains(pair.old) {
            result[pair.new] = pair.old
            taken.insert(pair.old)
        }
        var next = (reserved.union(earlier.map(\.speaker)).max() ?? -1) + 1
        for speaker in Set(new.map(\.speaker)).sorted() where result[speaker] == nil {
            result[speaker] = next
            next += 1
        }
        return result
    }
}
