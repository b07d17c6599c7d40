import TranscriptMerge

/// One word the recogniser heard, on the timeline of the audio passed to `recognize` (seconds from
/// its first sample), as a phone's on-device ASR would report it.
public struct RecognizedWord: Sendable, Hashable {
    /// The dictionary spelling, lower case, without PocketSphinx's pronunciation-variant suffix.
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    /// Lattice posterior probability in [0, 1]; low values are common on far-field speech.
    public var confidence: Double

    public init(text: String, startSeconds: Double, endSeconds: Double, confidence: Double) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
    }

    /// The same word in the shape the transcript merge and the device client take.
    public var word: Word {
        Word(text: text, startSeconds: startSeconds, endSeconds: endSeconds, confidence: confidence)
    }
}
