/// One utterance a `StreamingRecognizer` closed and decoded: its span and words on the stream's
/// timeline (seconds, `offsetSeconds` included).
public struct RecognizedUtterance: Sendable, Equatable {
    /// 0, 1, 2, … in stream order; stable, so a caller can make result ids of it.
    public var index: Int
    public var startSeconds: Double
    public var endSeconds: Double
    /// In time order; empty for a pause, or when decoding failed.
    public var words: [RecognizedWord]
    /// Why this utterance has no words although it was not decoded as silence (the decoder failed or
    /// no model could be loaded). The stream goes on with the next utterance.
    public var failure: RecognizerError?

    public init(index: Int, startSeconds: Double, endSeconds: Double, words: [RecognizedWord], failure: RecognizerError? = nil) {
        self.index = index
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.words = words
        self.failure = failure
    }
}
