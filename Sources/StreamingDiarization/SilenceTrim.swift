/// Where two detectors that hear differently agree that no one speaks, a final turn does not cover it:
/// the loudness track (a pause: at least `speakerChangePauseSeconds`, `speakerChangePauseDecibels`
/// below the loudest speech within 1 s, the rule already used at a change of speaker) and the
/// segmentation model (no local speaker in any of its frames there).
///
/// Why: the VAD pads every stretch of speech by 0.2 s, holds speech through pauses shorter than its
/// 0.8 s minimum silence (needed for quiet meeting speech), and frames are 0.5 s: turns cover silence
/// at their ends and in their pauses, the false alarm left on synthetic meetings. Either detector alone
/// also cuts real speech: the loudness track cuts the quiet ends of far-field speech, segmentation-3.0
/// misses some quiet speech the VAD hears (on ami-dev trn01–04 either alone cost 1.3–2.1 points, while
/// both together lost 0.15 s of trn04). Decided on the calibration meetings only (docs/accuracy.md).
/// A turn that starts or ends inside such a silence starts or ends where it ends or begins; one that
/// holds a silence is split around it. Pure; any thread.
public enum SilenceTrim {
    public struct Stretch: Sendable, Equatable {
        public var startSeconds: Double
        public var endSeconds: Double

        public init(startSeconds: Double, endSeconds: Double) {
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
        }
    }

    /// Pieces shorter than this left after the cuts are dropped: a sliver between two silences is no
    /// one's speech either (the segmentation's frame is 17 ms, a word at least ten times that).
    public static let shortestPieceSeconds = 0.05

    /// The windows' stretches where no local speaker talks, in time order (adjacent frames joined).
    public static func silences(in windows: [LocalActivityWindow]) -> [Stretch] {
        var result: [Stretch] = []
        var open: Stretch?
        for window in windows.sorted(by: { $0.firstCentreSeconds < $1.firstCentreSeconds }) {
            let half = window.frameStepSeconds / 2
            for (frame, mask) in window.activeMasks.enumerated() {
                let start = window.centreSeconds(frame: frame) - half, end = start + window.frameStepSeconds
                if mask == 0 {
                    if let run = open, start <= run.endSeconds + 1e-6 {
                        open = Stretch(startSeconds: run.startSeconds, endSeconds: end)
                    } else {
                        if let run = open { result.append(run) }
                        open = Stretch(startSeconds: start, endSeconds: end)
                    }
                } else if let run = open {
                    result.append(run)
                    open = nil
                }
            }
        }
        if let run = open { result.append(run) }
        return result
    }

    /// Where both `a` and `b` (each sorted and non-overlapping) hold, the pieces at least `minimumSeconds` long.
    public static func agreed(_ a: [Stretch], _ b: [Stretch], minimumSeconds: Double) -> [Stretch] {
        var result: [Stretch] = []
        var i = 0, j = 0
        while i < a.count, j < b.count {
            let start = max(a[i].startSeconds, b[j].startSeconds), end = min(a[i].endSeconds, b[j].endSeconds)
            if end - start >= minimumSeconds - 1e-9 { result.append(Stretch(startSeconds: start, endSeconds: end)) }
            if a[i].endSeconds < b[j].endSeconds { i += 1 } else { j += 1 }
        }
        return result
    }

    /// `turn` with every one of `silences` (sorted, non-overlapping) cut out of it, in time order; the
    /// turn itself when none touches it, empty when nothing of it is left.
    public static func pieces(of turn: OverlapTurns.Span, silences: [Stretch]) -> [OverlapTurns.Span] {
        var pieces: [OverlapTurns.Span] = []
        var start = turn.startSeconds
        for silence in silences[firstEnding(after: turn.startSeconds, in: silences)...] {
            guard silence.startSeconds < turn.endSeconds else { break }
            if silence.startSeconds > start {
                pieces.append(OverlapTurns.Span(speaker: turn.speaker, startSeconds: start, endSeconds: silence.startSeconds))
            }
            start = max(start, silence.endSeconds)
        }
        if turn.endSeconds > start { pieces.append(OverlapTurns.Span(speaker: turn.speaker, startSeconds: start, endSeconds: turn.endSeconds)) }
        if pieces == [turn] { return pieces }
        return pieces.filter { $0.endSeconds - $0.startSeconds >= shortestPieceSeconds }
    }

    /// Whether `seconds` lies in one of `stretches` (sorted, non-overlapping).
    static func contains(_ stretches: [Stretch], _ seconds: Double) -> Bool {
        let index = firstEnding(after: seconds, in: stretches)
        return index < stretches.count && stretches[index].startSeconds <= seconds
    }

    /// The index of the first of `stretches` (sorted, non-overlapping) that ends after `seconds`, or
    /// endIndex.
    private static func firstEnding(after seconds: Double, in stretches: [Stretch]) -> Int {
        var low = 0, high = stretches.count
        while low < high {
            let mid = (low + high) / 2
            if stretches[mid].endSeconds <= seconds { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension StreamingDiarizer {
    /// The session's stretches that both the loudness track and the segmentation `windows` hear as
    /// silence (`SilenceTrim`); empty when `DiarizerConfig.silenceTrim` or the pause search is off.
    public func agreedSilences(windows: [LocalActivityWindow]) -> [SilenceTrim.Stretch] {
        guard config.silenceTrim, !windows.isEmpty else { return [] }
        let pauses = loudnessPauses()
        guard !pauses.isEmpty else { return [] }
        return SilenceTrim.agreed(pauses, SilenceTrim.silences(in: windows), minimumSeconds: config.speakerChangePauseSeconds)
    }

    /// The session's pauses as the loudness track hears them (the rule of a change of speaker's dips of
    /// `speakerChangePauseDecibels` for `speakerChangePauseSeconds`), in time order; empty when that
    /// search is off.
    public func loudnessPauses() -> [SilenceTrim.Stretch] {
        guard config.speakerChangePauseDecibels > 0 else { return [] }
        return loudness.pauses(minimumSeconds: config.speakerChangePauseSeconds, dropDecibels: config.speakerChangePauseDecibels,
                               contextSeconds: 1)
            .map { SilenceTrim.Stretch(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
    }
}
