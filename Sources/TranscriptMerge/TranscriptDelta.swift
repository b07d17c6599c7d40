/// What one merger update changed: what the device is sent and what persistence writes.
public struct TranscriptDelta: Sendable {
    /// Utterances that are new or whose content changed, in time order.
    public var upserted: [Utterance]
    /// Utterances that no longer exist (their words were regrouped into others or deleted), ascending.
    public var removed: [UtteranceID]
    /// Words that are new or whose stored representation changed (text, times, confidence, final flag,
    /// speaker, speaker confidence or utterance), in time order. Persistence writes exactly these.
    public var changedWords: [LabelledWord]
    /// Words deleted because their result was replaced by fewer words, ascending.
    public var removedWords: [WordID]

    public init(
        upserted: [Utterance] = [], removed: [UtteranceID] = [], changedWords: [LabelledWord] = [],
        removedWords: [WordID] = []
    ) {
        self.upserted = upserted
        self.removed = removed
        self.changedWords = changedWords
        self.removedWords = removedWords
    }

    public var isEmpty: Bool {
        upserted.isEmpty && removed.isEmpty && changedWords.isEmpty && removedWords.isEmpty
    }
}
