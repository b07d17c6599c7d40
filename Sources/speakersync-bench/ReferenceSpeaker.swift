import DiarizationScoring

/// The reference speaker who speaks most inside `spans` (seconds summed over all of them; a tie goes to
/// the name that sorts first), or nil where nobody does. It names a frame's owner and judges whose
/// speech a hypothesis speaker's turns hold.
func referenceSpeaker(coveringMost spans: [Range<Double>], in reference: [SpeakerSegment]) -> String? {
    var covered: [String: Double] = [:]
    for span in spans {
        for turn in reference {
            let shared = min(span.upperBound, turn.endSeconds) - max(span.lowerBound, turn.startSeconds)
            if shared > 0 { covered[turn.speaker, default: 0] += shared }
        }
    }
    return covered.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
}
