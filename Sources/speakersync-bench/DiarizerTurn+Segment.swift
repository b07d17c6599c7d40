import DiarizationScoring
import StreamingDiarization

extension DiarizerTurn {
    /// The turn as a scored segment, its speaker id as the name.
    var segment: SpeakerSegment { SpeakerSegment(speaker: String(speaker), startSeconds: startSeconds, endSeconds: endSeconds) }
}
