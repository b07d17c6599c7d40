/// How `StreamingRecognizer` decides where utterances end while the audio is still arriving. The pause
/// rule itself (`minPauseSeconds`, `pauseMarginDecibels`, `maxUtteranceSeconds`) is the batch
/// recogniser's, from its `RecognizerConfig`; these are what a stream needs on top of it.
public struct StreamingRecognizerConfig: Sendable, Equatable {
    /// The noise floor is the 10th percentile of the frame levels of this much recent audio. The batch
    /// recogniser uses the whole recording; a stream has only its past, and a window lets the floor
    /// follow a room or microphone that changes (a browser's automatic gain, a door closing).
    public var noiseFloorWindowSeconds: Double
    /// A pause this long closes the utterance before anyone speaks again, cut half of it after the
    /// pause began, so the last words of a turn do not wait for the next turn. Shorter pauses (at least
    /// `minPauseSeconds`) are cut in their middle once speech resumes, as the batch recogniser cuts.
    public var closingPauseSeconds: Double
    /// No pause ends an utterance before this much audio has been heard: the floor estimated from
    /// less is unreliable (a stream that opens with speech would see pauses inside words).
    public var warmUpSeconds: Double

    public init(noiseFloorWindowSeconds: Double = 60, closingPauseSeconds: Double = 0.6, warmUpSeconds: Double = 1) {
        self.noiseFloorWindowSeconds = noiseFloorWindowSeconds
        self.closingPauseSeconds = closingPauseSeconds
        self.warmUpSeconds = warmUpSeconds
    }

    public static let `default` = StreamingRecognizerConfig()
}
