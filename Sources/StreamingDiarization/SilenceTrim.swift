/// Where a segmentation model hears no one for a while inside a turn, the turn is split around that
/// stretch: the VAD bridges pauses shorter than its minimum silence, and a pause is no one's speech.
/// Only pauses with speech of the turn on both sides are cut (a turn's ends are the VAD's, padded on
/// purpose). Pure; any thread.
public enum SilenceTrim {
    /// The session's stretches of at least `minimumSeconds` where every frame of the windows is silent.
    public static func silences(in windows: [LocalActivityWindow], minimumSeconds: Double) -> [(startSeconds: Double, endSeconds: Double)] {
        var result: [(startSeconds: Double, endSeconds: Double)] = []
        var open: (startSeconds: Double, endSeconds: Double)?
        func close() {
            if let run = open, run.endSeconds - run.startSeconds >= minimumSeconds - 1e-9 { result.append(run) }
            open = nil
        }
        for window in windows {
            let half = window.frameStepSeconds / 2
            for (frame, mask) in window.activeMasks.enumerated() {
                let start = window.centreSeconds(frame: frame) - half, end = start + window.frameStepSeconds
                if mask == 0 {
                    if let run = open, start <= run.endSeconds + 1e-6 { open = (run.startSeconds, end) } else { close(); open = (start, end) }
                } else {
                    close()
                }
            }
        }
        close()
        return result
    }

    /// `turns` with every silence that lies strictly inside one cut out of it.
    public static func trimmed(_ turns: [OverlapTurns.Span], silences: [(startSeconds: Double, endSeconds: Double)], edges: Bool = false) -> [OverlapTurns.Span] {
        turns.flatMap { turn -> [OverlapTurns.Span] in
            var pieces: [OverlapTurns.Span] = []
            var start = turn.startSeconds, end = turn.endSeconds
            for silence in silences where silence.startSeconds < end && silence.endSeconds > start {
                if silence.startSeconds > start && silence.endSeconds < end {
                    pieces.append(OverlapTurns.Span(speaker: turn.speaker, startSeconds: start, endSeconds: silence.startSeconds))
                    start = silence.endSeconds
                } else if edges, silence.startSeconds <= start {
                    start = min(end, silence.endSeconds)
                } else if edges {
                    end = max(start, silence.startSeconds)
                }
            }
            if end > start { pieces.append(OverlapTurns.Span(speaker: turn.speaker, startSeconds: start, endSeconds: end)) }
            return pieces
        }
    }
}
