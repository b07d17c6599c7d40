import TranscriptMerge

/// The diarization a device saw live: every stretch of time labelled by the first turns the session
/// published over it, with the label they had then. Later revisions (a provider relabelling the
/// past, the offline re-clustering at finalize) do not change it, which is what makes "live DER"
/// comparable with the final one. Public for `speakersync-bench diarize`, which scores the in-process
/// pipeline's live labels the same way.
public struct LiveTurnTimeline: Sendable {
    public private(set) var segments: [SpeakerTurn] = []
    /// Everything before this time has been labelled live.
    private var frontierSeconds = 0.0

    public init() {}

    /// Turns just published (upserted): the parts beyond the frontier become live history.
    public mutating func published(_ turns: [SpeakerTurn]) {
        var newFrontier = frontierSeconds
        for turn in turns.sorted(by: { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) }) where turn.endSeconds > frontierSeconds {
            let start = max(turn.startSeconds, frontierSeconds)
            segments.append(SpeakerTurn(id: turn.id, speaker: turn.speaker, startSeconds: start, endSeconds: turn.endSeconds))
            newFrontier = max(newFrontier, turn.endSeconds)
        }
        frontierSeconds = newFrontier
    }
}
