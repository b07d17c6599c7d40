/// One segmentation window's hard decisions (pyannote segmentation-3.0 or any model of its kind): for
/// each frame, which of the window's local speakers talk, as a bit mask (bit k: local speaker k). Local
/// speakers are numbered per window. Frame i's centre is `firstCentreSeconds + i · frameStepSeconds`
/// on the session's clock, and the frame stands for the `frameStepSeconds` around its centre.
public struct LocalActivityWindow: Sendable, Equatable {
    public var firstCentreSeconds: Double
    public var frameStepSeconds: Double
    /// One mask per frame; a byte holds up to eight local speakers (the models here have three).
    public var activeMasks: [UInt8]

    public init(firstCentreSeconds: Double, frameStepSeconds: Double, activeMasks: [UInt8]) {
        self.firstCentreSeconds = firstCentreSeconds
        self.frameStepSeconds = frameStepSeconds
        self.activeMasks = activeMasks
    }

    public func centreSeconds(frame: Int) -> Double { firstCentreSeconds + Double(frame) * frameStepSeconds }

    /// The local speaker a frame's mask holds alone (its only bit), or nil for silence or overlap.
    public static func soloSpeaker(_ mask: UInt8) -> Int? {
        mask != 0 && mask & (mask - 1) == 0 ? mask.trailingZeroBitCount : nil
    }

    /// How many local speakers talk alone for at least `minimumSeconds` each in this window: people
    /// the model tells apart inside one window, overlap left out.
    public func soloSpeakerCount(minimumSeconds: Double) -> Int {
        var soloFrames = [Int](repeating: 0, count: 8)
        for mask in activeMasks { if let local = Self.soloSpeaker(mask) { soloFrames[local] += 1 } }
        return soloFrames.filter { Double($0) * frameStepSeconds >= minimumSeconds }.count
    }
}

/// Where a one-speaker-at-a-time diarizer's turns miss a second voice, a segmentation model that hears
/// overlap can name it. This adds, to final turns, the overlapped speech of people the turns already
/// know, and gives the added turns to those people by evidence inside the same window:
///
/// 1. In each window, a local speaker is the global speaker whose turns cover most of the frames where
///    that local speaker talks alone (a one-to-one assignment, largest evidence first; a local speaker
///    with no such frame stays unnamed).
/// 2. In a frame where two or more local speakers talk, every named one whose global speaker has no
///    turn there gets that frame.
/// 3. With `fillsMissedSpeech`, a frame where one named local speaker talks and no turn at all covers
///    it goes to that speaker too (speech the turns' VAD did not hear), unless it lies in one of
///    `pauses` (where the loudness track hears a dip: what the model calls speech there is a turn's
///    end carried into the silence after it, the false alarm filling cost on synthetic meetings).
/// 4. With an `OrphanVoice`, the local speakers left unnamed are a voice the turns never have alone
///    (someone who talks over others, or whom the embeddings folded into the person they talk with):
///    their frames where a turn covers the speech or another local speaker talks too (never speech the
///    VAD missed, as in 2) become one new speaker's, provided they add up to `minimumSeconds` in the
///    session. Every window's orphans are the same new speaker: the model's local speakers carry no
///    identity across windows, and one missed person is the common case (two are then counted as one).
///
/// The frames' decisions are the model's, the names come from the turns; the only threshold is the
/// orphan voice's speech. Nothing is removed or moved; without an `OrphanVoice` what is added never
/// creates a speaker the turns do not have, so counts, enrolled names and the live labels' identities
/// stay the diarizer's. Pure; any thread.
public enum OverlapTurns {
    /// A stretch of one speaker's speech (the added turns, or the turns given).
    public struct Span: Sendable, Equatable {
        public var speaker: Int32
        public var startSeconds: Double
        public var endSeconds: Double

        public init(speaker: Int32, startSeconds: Double, endSeconds: Double) {
            self.speaker = speaker
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
        }
    }

    /// Step 4's new speaker: its id (one no turn, known or retired speaker has) and the speech its
    /// frames must add up to in the session.
    public struct OrphanVoice: Sendable, Equatable {
        public var speaker: Int32
        public var minimumSeconds: Double

        public init(speaker: Int32, minimumSeconds: Double) {
            self.speaker = speaker
            self.minimumSeconds = minimumSeconds
        }
    }

    /// The spans to add to `turns` (which may overlap each other), sorted by start, runs of adjacent
    /// frames of one speaker merged.
    public static func added(to turns: [Span], windows: [LocalActivityWindow], fillsMissedSpeech: Bool = false,
                             outside pauses: [SilenceTrim.Stretch] = [], orphanVoice: OrphanVoice? = nil) -> [Span] {
        let sorted = turns.filter { $0.endSeconds > $0.startSeconds }.sorted { $0.startSeconds < $1.startSeconds }
        let longest = sorted.map { $0.endSeconds - $0.startSeconds }.max() ?? 0
        var added: [Span] = []
        var orphaned: [Span] = []
        for window in windows where !window.activeMasks.isEmpty {
            let covering = coveringSpeakers(window: window, sortedTurns: sorted, longestSeconds: longest)
            let names = localNames(window: window, covering: covering)
            for (frame, mask) in window.activeMasks.enumerated() where mask != 0 {
                let talking = (0 ..< 8).filter { mask & (1 << $0) != 0 }
                let present = covering[frame]
                let centre = window.centreSeconds(frame: frame), half = window.frameStepSeconds / 2
                var speakers: [Int32] = []
                if talking.count >= 2 {
                    speakers = talking.compactMap { names[$0] }.filter { !present.contains($0) }
                } else if fillsMissedSpeech, present.isEmpty, let name = names[talking[0]], !SilenceTrim.contains(pauses, centre) {
                    speakers = [name]
                }
                for speaker in speakers {
                    added.append(Span(speaker: speaker, startSeconds: max(0, centre - half), endSeconds: centre + half))
                }
                if let orphanVoice, talking.count >= 2 || !present.isEmpty, talking.contains(where: { names[$0] == nil }) {
                    orphaned.append(Span(speaker: orphanVoice.speaker, startSeconds: max(0, centre - half), endSeconds: centre + half))
                }
            }
        }
        let gap = windows.map(\.frameStepSeconds).max() ?? 0
        if let orphanVoice, orphaned.reduce(0, { $0 + $1.endSeconds - $1.startSeconds }) >= orphanVoice.minimumSeconds - 1e-9 {
            added += orphaned
        }
        return merged(added, joiningGapsUpTo: gap)
    }

    /// Per frame of `window`, the speakers whose turn holds the frame's centre; `sorted` by start, none
    /// longer than `longestSeconds` (which bounds the search for the turns near the window).
    static func coveringSpeakers(window: LocalActivityWindow, sortedTurns sorted: [Span], longestSeconds longest: Double) -> [[Int32]] {
        let first = window.centreSeconds(frame: 0), last = window.centreSeconds(frame: window.activeMasks.count - 1)
        let lower = firstIndex(in: sorted) { $0.startSeconds >= first - longest }
        let near = sorted[lower...].prefix { $0.startSeconds <= last }.filter { $0.endSeconds >= first }
        return window.activeMasks.indices.map { frame in
            let t = window.centreSeconds(frame: frame)
            return near.filter { $0.startSeconds <= t && t < $0.endSeconds }.map(\.speaker)
        }
    }

    /// Local speaker → global speaker for one window: evidence is the frames where the local speaker
    /// talks alone and a turn of the global speaker covers the frame; pairs are taken largest first,
    /// each local and each global speaker at most once.
    static func localNames(window: LocalActivityWindow, covering: [[Int32]]) -> [Int: Int32] {
        localNames(evidence: soloEvidence(window: window, covering: covering))
    }

    /// The same from a window's `soloEvidence`, for a caller that reads the evidence too.
    static func localNames(evidence: [Int: [Int32: Int]]) -> [Int: Int32] {
        var pairs: [(local: Int, speaker: Int32, count: Int)] = []
        for (local, counts) in evidence { for (speaker, count) in counts { pairs.append((local, speaker, count)) } }
        // Largest first; ties by local then global number, so the answer never depends on hashing.
        pairs.sort { ($0.count, -$0.local, -$0.speaker) > ($1.count, -$1.local, -$1.speaker) }
        var names: [Int: Int32] = [:]
        var taken = Set<Int32>()
        for pair in pairs where names[pair.local] == nil && !taken.contains(pair.speaker) {
            names[pair.local] = pair.speaker
            taken.insert(pair.speaker)
        }
        return names
    }

    /// Local speaker → global speaker → how many of the frames where the local speaker talks alone a
    /// turn of the global speaker covers.
    static func soloEvidence(window: LocalActivityWindow, covering: [[Int32]]) -> [Int: [Int32: Int]] {
        var evidence: [Int: [Int32: Int]] = [:]
        for (frame, mask) in window.activeMasks.enumerated() {
            guard let local = LocalActivityWindow.soloSpeaker(mask) else { continue }
            for speaker in Set(covering[frame]) { evidence[local, default: [:]][speaker, default: 0] += 1 }
        }
        return evidence
    }

    /// Sorted by start; one speaker's spans that touch or are at most `gap` apart become one.
    static func merged(_ spans: [Span], joiningGapsUpTo gap: Double) -> [Span] {
        var result: [Span] = []
        var open: [Int32: Int] = [:] // speaker → index in result of their latest span
        for span in spans.sorted(by: { ($0.startSeconds, $0.speaker) < ($1.startSeconds, $1.speaker) }) {
            if let index = open[span.speaker], span.startSeconds - result[index].endSeconds <= gap + 1e-9 {
                result[index].endSeconds = max(result[index].endSeconds, span.endSeconds)
            } else {
                open[span.speaker] = result.count
                result.append(span)
            }
        }
        return result
    }

    /// The first index whose element satisfies `isAtOrAfter` (monotone over the array), or endIndex.
    private static func firstIndex(in spans: [Span], where isAtOrAfter: (Span) -> Bool) -> Int {
        var low = 0, high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if isAtOrAfter(spans[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
