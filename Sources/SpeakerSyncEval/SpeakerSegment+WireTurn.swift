import DiarizationScoring
import SpeakerSyncClient

extension SpeakerSegment {
    /// A turn of the server's `stats`, as the scorers take it.
    init(_ turn: WireTurn) {
        self.init(speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
    }
}
