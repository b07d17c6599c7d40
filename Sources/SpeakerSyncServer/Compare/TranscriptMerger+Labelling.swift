import PluginHost
import SpeakerSyncStore
import TranscriptMerge

/// What every labelling other than the session's own does with the merge (a shadow provider, a
/// re-diarization, an uploaded reference): start from the conversation's words under its own labels,
/// merge its provider's turns in, and be stored. One place, so the labellings being compared are made
/// the same way.
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

    /// A provider's turns merged in: each gets the label `speakers` gives its key `keyPrefix + speaker`,
    /// the id `idPrefix:turnID`, and its place on the conversation timeline (`offsetSeconds` later).
    mutating func mergeProviderTurns(_ turns: [ProviderTurn], provider: String, idPrefix: String, keyPrefix: String,
                                     offsetSeconds: Double = 0, speakers: inout SpeakerRegistry) -> TranscriptDelta {
        var upserts: [SpeakerTurn] = []
        var removals: [String] = []
        for turn in turns {
            let id = "\(idPrefix):\(turn.turnID)"
            if turn.isRemoved {
                removals.append(id)
                continue
            }
            let start = turn.startSeconds + offsetSeconds
            let (label, _) = speakers.label(provider: provider, key: "\(keyPrefix)\(turn.speaker)", heardAtSeconds: start)
            upserts.append(SpeakerTurn(id: id, speaker: label, startSeconds: start, endSeconds: turn.endSeconds + offsetSeconds,
                                       confidence: turn.confidence))
        }
        var delta = removals.isEmpty ? TranscriptDelta() : removeTurns(ids: removals)
        if !upserts.isEmpty { delta = delta.followed(by: upsertTurns(upserts)) }
        return delta
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
