/// Where the segmentation hears one person alone and the turns give that moment to someone else whom the
/// same window hears as a different local speaker, the moment goes to the person the model hears.
///
/// Why: speakerkit's turns come from 0.5 s frames embedded over 1.5 s windows, so a change of speaker is
/// placed to within a frame and a short turn inside someone else's speech (0.5–1 s: "I see, but…") is
/// folded into the longer one. segmentation-3.0 places the change to 17 ms and tells the two people apart
/// inside its 10 s window; what it cannot do is say who they are across windows. The turns can. So each
/// window's local speakers get global names from the turns (`OverlapTurns.localNames`: the frames where
/// a local speaker talks alone, largest evidence first, one-to-one), and only a name whose turns cover
/// more than `trustedShare` of its local speaker's covered solo frames is trusted (a local speaker whose
/// solo frames the turns split between people is one the model itself may have split or merged). Then a
/// frame where one trusted local speaker X talks alone, covered by a turn of a speaker Y that another
/// trusted local speaker of the same window is named, is taken from Y and given to X.
///
/// Nothing is moved where the window hears no one else the turns know (the model's local speaker then
/// has no second name to be told apart from), in silence, overlap, or where no turn is; runs shorter than
/// `SilenceTrim.shortestPieceSeconds` are left as they were (carried over from `SilenceTrim`, not tuned).
/// The share is the one tuned number: speakerkit uses `DiarizerConfig.soloRelabelShare` (0.9, chosen on
/// calibration meetings only); the default here, 0.5, is the plain majority. Pure; any thread.
public enum SoloRelabel {
    /// The turns after the moves: what is left of each turn, and the stretches given to another speaker.
    public struct Result: Sendable, Equatable {
        /// Per input turn, in input order: what is left of it (the turn itself when nothing moved).
        public var pieces: [[OverlapTurns.Span]]
        /// Stretches taken from one speaker's turns and given to another, merged per speaker.
        public var given: [OverlapTurns.Span]
    }

    public static func relabelled(_ turns: [OverlapTurns.Span], windows: [LocalActivityWindow], trustedShare: Double = 0.5) -> Result {
        let sorted = turns.filter { $0.endSeconds > $0.startSeconds }.sorted { $0.startSeconds < $1.startSeconds }
        let longest = sorted.map { $0.endSeconds - $0.startSeconds }.max() ?? 0
        var given: [OverlapTurns.Span] = []
        var taken: [Int32: [SilenceTrim.Stretch]] = [:]
        for window in windows where !window.activeMasks.isEmpty {
            let covering = OverlapTurns.coveringSpeakers(window: window, sortedTurns: sorted, longestSeconds: longest)
            let names = trustedNames(window: window, covering: covering, share: trustedShare)
            guard names.count >= 2 else { continue }
            let named = Set(names.values)
            var run: (speaker: Int32, losers: Set<Int32>, start: Double, end: Double)?
            func close() {
                if let open = run, open.end - open.start >= SilenceTrim.shortestPieceSeconds - 1e-9 {
                    given.append(OverlapTurns.Span(speaker: open.speaker, startSeconds: open.start, endSeconds: open.end))
                    for loser in open.losers {
                        taken[loser, default: []].append(SilenceTrim.Stretch(startSeconds: open.start, endSeconds: open.end))
                    }
                }
                run = nil
            }
            let half = window.frameStepSeconds / 2
            for (frame, mask) in window.activeMasks.enumerated() {
                let start = max(0, window.centreSeconds(frame: frame) - half), end = window.centreSeconds(frame: frame) + half
                guard let local = LocalActivityWindow.soloSpeaker(mask), let speaker = names[local],
                      !covering[frame].isEmpty, !covering[frame].contains(speaker),
                      covering[frame].allSatisfy(named.contains) else {
                    close()
                    continue
                }
                let losers = Set(covering[frame])
                if let open = run, open.speaker == speaker, open.losers == losers, start <= open.end + 1e-6 {
                    run = (speaker, losers, open.start, end)
                } else {
                    close()
                    run = (speaker, losers, start, end)
                }
            }
            close()
        }
        let cuts = taken.mapValues { stretches in
            stretches.sorted { $0.startSeconds < $1.startSeconds }
        }
        let pieces = turns.map { turn in
            guard let stretches = cuts[turn.speaker] else { return [turn] }
            return SilenceTrim.pieces(of: turn, silences: stretches)
        }
        return Result(pieces: pieces, given: OverlapTurns.merged(given, joiningGapsUpTo: 0))
    }

    /// `OverlapTurns.localNames`, keeping only the names whose turns cover more than `share` of their
    /// local speaker's solo frames that some turn covers.
    static func trustedNames(window: LocalActivityWindow, covering: [[Int32]], share: Double = 0.5) -> [Int: Int32] {
        let evidence = OverlapTurns.soloEvidence(window: window, covering: covering)
        var covered = [Int](repeating: 0, count: 8)
        for (frame, mask) in window.activeMasks.enumerated() where !covering[frame].isEmpty {
            if let local = LocalActivityWindow.soloSpeaker(mask) { covered[local] += 1 }
        }
        return OverlapTurns.localNames(evidence: evidence).filter { local, speaker in
            Double(evidence[local]?[speaker] ?? 0) > share * Double(covered[local])
        }
    }
}
