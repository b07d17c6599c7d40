/// A word with the speaker the merger gave it and the utterance it belongs to: what persistence stores.
public struct LabelledWord: Hashable, Sendable {
    public var id: WordID
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var confidence: Double?
    /// Whether the ASR result holding this word was final.
    public var isFinal: Bool
    /// nil while no turn overlaps the word or lies within the tolerance.
    public var speaker: String?
    /// How sure the merger is of `speaker` (see `TranscriptMerger` for the formula); nil when unlabelled.
    public var speakerConfidence: Double?
    public var utteranceID: UtteranceID

    public init(
        id: WordID, text: String, startSeconds: Double, endSeconds: Double, confidence: Double?,
        isFinal: Bool, speaker: String?, speakerConfidence: Double?, utteranceID: UtteranceID
    ) {
        self.id = id
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
        self.isFinal = isFinal
        self.speaker = speaker
        self.speakerConfidence = speakerConfidence
        self.utteranceID = utteranceID
    }
}
