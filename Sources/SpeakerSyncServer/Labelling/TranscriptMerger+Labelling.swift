import SpeakerSyncStore
import TranscriptMerge

/// The merge as every labelling other than the session's own starts it (a shadow provider, a
/// re-diarization, an uploaded reference): the conversation's words under its own labels; and any
/// merge as a labelling to store (`Labelling` does the provider's turns).
extension TranscriptMerger {
    /// A merger over `words` carrying the labels of `labelling` (its turns and word speakers), or none.
    static func labelling(_ words: [LabelledWord], from labelling: LabellingRecord? = nil, config: MergeConfig) -> TranscriptMerger {
        let labels = Dictionary((labelling?.words ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var merger = TranscriptMerger(config: config)
        merger.restore(words: words.map { word in
            var word = word
            word.speaker = labels[word.id]?.speaker
            word.speakerConfidence = labels[word.id]?.speakerConfidence
            return word
        }, turns: labelling?.turns ?? [])
        return merger
    }

    /// This merge as a labelling to store: its turns in time order and every word's speaker.
    func labellingRecord(name: String, provider: String, source: LabellingSource, isComplete: Bool,
                         statusReason: String? = nil, statsJSON: String) -> LabellingRecord {
        LabellingRecord(
            name: name, provider: provider, source: source, isComplete: isComplete, statusReason: statusReason, statsJSON: statsJSON,
            turns: turns.sorted { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) },
            words: words.map { WordLabel(id: $0.id, speaker: $0.speaker, speakerConfidence: $0.speakerConfidence) })
    }
}
