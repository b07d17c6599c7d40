/// The turns of a provider that diarizes whole recordings (Picovoice Falcon), made live by diarizing a
/// sliding window of the latest audio again and again: each window's result replaces the turns inside
/// the window, its speakers taking the labels of the turns they overlap (`SpeakerRelabelling`), so
/// "Speaker 2" stays the same voice from window to window; a final pass over the whole session replaces
/// everything the same way.
///
/// What overlap cannot do: a voice silent for longer than a window has nothing to overlap when it
/// returns, so live it gets a new label; the final pass, one diarization of the whole session, gives
/// it back its first label (the label it overlaps most).
///
/// Pure: no audio, no engine; the session feeds it results and sends on the changes it returns.
public struct WindowedTurnTracker: Sendable {
    public struct Turn: Sendable, Equatable {
        public var id: UInt64
        public var speaker: Int
        public var startSeconds: Double
        public var endSeconds: Double

        public init(id: UInt64, speaker: Int, startSeconds: Double, endSeconds: Double) {
            self.id = id
            self.speaker = speaker
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
        }
    }

    /// A diarizer's segment, in seconds of the session, with that run's own speaker tag.
    public struct Segment: Sendable, Equatable {
        public var tag: Int
        public var startSeconds: Double
        public var endSeconds: Double

        public init(tag: Int, startSeconds: Double, endSeconds: Double) {
            self.tag = tag
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
        }
    }

    public enum Change: Sendable, Equatable {
        /// A new turn, or a turn whose id was seen before, revised.
        case upsert(Turn)
        case remove(UInt64)
    }

    /// The turns as they stand, by id.
    public private(set) var turns: [UInt64: Turn] = [:]
    private var nextID: UInt64 = 0
    /// Segments shorter than this are dropped (a diarizer's slivers at window edges).
    public var minimumTurnSeconds: Double

    public init(minimumTurnSeconds: Double = 0.05) {
        self.minimumTurnSeconds = minimumTurnSeconds
    }

    /// A diarization of the audio from `windowStartSeconds` to `windowEndSeconds`: the turns inside are
    /// replaced by `segments` (clipped to the window), a turn crossing the window's start is cut there.
    public mutating func apply(windowStartSeconds: Double, windowEndSeconds: Double, segments: [Segment]) -> [Change] {
        let inside = segments.compactMap { segment -> Segment? in
            var clipped = segment
            clipped.startSeconds = max(segment.startSeconds, windowStartSeconds)
            clipped.endSeconds = min(segment.endSeconds, windowEndSeconds)
            return clipped.endSeconds - clipped.startSeconds >= minimumTurnSeconds ? clipped : nil
        }
        // Labels from the turns the window covers, clipped to it (what the new result can overlap).
        let earlier = turns.values.compactMap { turn -> SpeakerRelabelling.Span? in
            let start = max(turn.startSeconds, windowStartSeconds), end = min(turn.endSeconds, windowEndSeconds)
            return end > start ? SpeakerRelabelling.Span(speaker: turn.speaker, startSeconds: start, endSeconds: end) : nil
        }
        let labels = SpeakerRelabelling.labels(for: inside.map(Self.span), earlier: earlier, reserved: Set(turns.values.map(\.speaker)))
        var changes: [Change] = []
        for turn in turns.values.sorted(by: { $0.id < $1.id }) where turn.endSeconds > windowStartSeconds {
            if turn.startSeconds < windowStartSeconds {
                var cut = turn
                cut.endSeconds = windowStartSeconds
                turns[turn.id] = cut
                changes.append(.upsert(cut))
            } else {
                turns[turn.id] = nil
                changes.append(.remove(turn.id))
            }
        }
        changes += add(inside, labels: labels)
        return changes
    }

    /// A diarization of the whole session: every turn is replaced, speakers labelled by overlap with all
    /// the turns so far (`reserved`: labels an unmatched speaker must not take).
    public mutating func replaceAll(with segments: [Segment], reserved: Set<Int> = []) -> [Change] {
        let kept = segments.filter { $0.endSeconds - $0.startSeconds >= minimumTurnSeconds }
        let earlier = turns.values.map { SpeakerRelabelling.Span(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let labels = SpeakerRelabelling.labels(for: kept.map(Self.span), earlier: earlier, reserved: reserved)
        var changes: [Change] = turns.keys.sorted().map { .remove($0) }
        turns.removeAll()
        changes += add(kept, labels: labels)
        return changes
    }

    private mutating func add(_ segments: [Segment], labels: [Int: Int]) -> [Change] {
        segments.sorted { ($0.startSeconds, $0.tag) < ($1.startSeconds, $1.tag) }.map { segment in
            let turn = Turn(id: nextID, speaker: labels[segment.tag] ?? segment.tag, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds)
            nextID += 1
            turns[turn.id] = turn
            return .upsert(turn)
        }
    }

    private static func span(_ segment: Segment) -> SpeakerRelabelling.Span {
        SpeakerRelabelling.Span(speaker: segment.tag, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds)
    }
}
