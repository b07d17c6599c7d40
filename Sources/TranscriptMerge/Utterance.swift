/// Consecutive words of one speaker (or consecutive unlabelled words) without a long pause between them.
public struct Utterance: Hashable, Sendable, Identifiable {
    public var id: UtteranceID
    /// The speaker of every word in it; nil for a run of unlabelled words.
    public var speaker: String?
    public var startSeconds: Double
    /// The latest end among its words (words may overlap, so not always the last word's end).
    public var endSeconds: Double
    /// The words' texts joined by single spaces.
    public var text: String
    /// In (start, end, id) order, all carrying `utteranceID == id`.
    public var words: [LabelledWord]

    public init(
        id: UtteranceID, speaker: String?, startSeconds: Double, endSeconds: Double, text: String,
        words: [LabelledWord]
    ) {
        self.id = id
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.text = text
        self.words = words
    }

    /// Builds an utterance from its words (non-empty, sorted); speaker and times derive from them.
    init(id: UtteranceID, words: [LabelledWord]) {
        var end = words.first?.endSeconds ?? 0
        for word in words where word.endSeconds > end { end = word.endSeconds }
        self.init(
            id: id, speaker: words.first?.speaker, startSeconds: words.first?.startSeconds ?? 0,
            endSeconds: end, text: words.map(\.text).joined(separator: " "), words: words
        )
    }
}
