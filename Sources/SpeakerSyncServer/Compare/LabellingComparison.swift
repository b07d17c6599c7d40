import DiarizationScoring
import Foundation
import SpeakerSyncStore
import TranscriptMerge

/// Providers compared on the same conversation: for every pair of labellings, the diarization error
/// rate of one against the other (the first as reference: DER is not symmetric) and the share of
/// words both give the same speaker under the best one-to-one label mapping; for each, its speakers
/// and figures; against a reference labelling when one is named. Pure: the route loads, this scores.
struct LabellingComparison {
    /// DER with `speakersync eval`'s collar (0.25 s in all, pyannote's convention) and overlap scored,
    /// over [0, audio end].
    static let derConfig = DERConfig(collarSeconds: 0.25)

    struct Pair {
        var reference: String
        var hypothesis: String
        var der: DERComponents
        var derNoCollar: DERComponents
        /// Words labelled by both and given the same speaker under the mapping, of all words in both.
        var sameSpeakerWords: Int
        var comparedWords: Int
        var wordMapping: [String: String]

        var wordAgreement: Double? { comparedWords == 0 ? nil : Double(sameSpeakerWords) / Double(comparedWords) }
    }

    let labellings: [LabellingRecord]
    let reference: LabellingRecord?
    let pairs: [Pair]
    let audioSeconds: Double

    init(labellings: [LabellingRecord], reference: LabellingRecord?, audioSeconds: Double) {
        self.labellings = labellings
        self.reference = reference
        self.audioSeconds = audioSeconds
        // The scored region is the audio, its end in whole milliseconds as UEM and RTTM files write
        // times (so a comparison scores what `speakersync eval` scores with a synthesised UEM).
        let end = (audioSeconds * 1000).rounded() / 1000
        let uem = end > 0 ? [TimeSpan(startSeconds: 0, endSeconds: end)] : nil
        var pairs: [Pair] = []
        let candidates = (reference.map { [$0] } ?? []) + labellings
        for (i, first) in candidates.enumerated() {
            for second in candidates[(i + 1)...] {
                pairs.append(Self.pair(first, second, uem: uem))
            }
        }
        self.pairs = pairs
    }

    static func segments(_ labelling: LabellingRecord) -> [SpeakerSegment] {
        labelling.turns.map { SpeakerSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
    }

    static func pair(_ reference: LabellingRecord, _ hypothesis: LabellingRecord, uem: [TimeSpan]?) -> Pair {
        let der = DiarizationErrorRate.score(reference: segments(reference), hypothesis: segments(hypothesis), uem: uem, config: derConfig)
        let plain = DiarizationErrorRate.score(reference: segments(reference), hypothesis: segments(hypothesis), uem: uem, config: .default)
        let agreement = wordAgreement(reference.words, hypothesis.words)
        return Pair(reference: reference.name, hypothesis: hypothesis.name, der: der, derNoCollar: plain,
                    sameSpeakerWords: agreement.same, comparedWords: agreement.compared, wordMapping: agreement.mapping)
    }

    /// Over the words both labellings hold: the one-to-one mapping of hypothesis labels to reference
    /// labels that makes the most words agree (Hungarian, as DER maps speakers), and how many then do.
    /// A word either leaves unlabelled counts as compared and not agreeing.
    static func wordAgreement(_ reference: [WordLabel], _ hypothesis: [WordLabel]) -> (same: Int, compared: Int, mapping: [String: String]) {
        let referenceLabels = Dictionary(reference.map { ($0.id, $0.speaker) }, uniquingKeysWith: { first, _ in first })
        var compared = 0
        var counts: [String: [String: Int]] = [:]
        for word in hypothesis {
            guard let truth = referenceLabels[word.id] else { continue }
            compared += 1
            guard let truth, let label = word.speaker else { continue }
            counts[label, default: [:]][truth, default: 0] += 1
        }
        let hypothesisLabels = counts.keys.sorted()
        let referenceSpeakers = Set(counts.values.flatMap(\.keys)).sorted()
        let weights = hypothesisLabels.map { label in referenceSpeakers.map { Double(counts[label]?[$0] ?? 0) } }
        var same = 0
        var mapping: [String: String] = [:]
        for (row, column) in HungarianAssignment.maximize(weights).enumerated() {
            guard let column, let count = counts[hypothesisLabels[row]]?[referenceSpeakers[column]], count > 0 else { continue }
            mapping[hypothesisLabels[row]] = referenceSpeakers[column]
            same += count
        }
        return (same, compared, mapping)
    }

    var jsonObject: [String: Any] {
        func stats(_ labelling: LabellingRecord) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(labelling.statsJSON.utf8))) as? [String: Any] ?? [:]
        }
        func describe(_ labelling: LabellingRecord) -> [String: Any] {
            let figures = stats(labelling)
            return [
                "name": labelling.name, "provider": labelling.provider, "source": labelling.source.rawValue,
                "complete": labelling.isComplete, "status_reason": labelling.statusReason as Any? ?? NSNull(),
                "speakers": Set(labelling.turns.map(\.speaker)).count, "turns": labelling.turns.count,
                "words": labelling.words.count, "unlabelled_words": labelling.words.filter { $0.speaker == nil }.count,
                "real_time_factor": figures["real_time_factor"] ?? NSNull(),
                "label_latency_seconds": figures["label_latency_seconds"] ?? NSNull(),
                "chunk_seconds": figures["chunk_seconds"] ?? NSNull(),
            ]
        }
        func der(_ components: DERComponents) -> [String: Any] {
            ["der": components.errorRate, "missed_seconds": components.missedSeconds, "false_alarm_seconds": components.falseAlarmSeconds,
             "confusion_seconds": components.confusionSeconds, "reference_seconds": components.referenceSeconds]
        }
        return [
            "audio_seconds": audioSeconds,
            "collar_seconds": Self.derConfig.collarSeconds,
            "reference": reference.map(describe) ?? NSNull(),
            "labellings": labellings.map(describe),
            "pairs": pairs.map { pair -> [String: Any] in
                [
                    "reference": pair.reference, "hypothesis": pair.hypothesis,
                    "der": pair.der.errorRate, "der_no_collar": pair.derNoCollar.errorRate, "der_components": der(pair.der),
                    "speaker_mapping": pair.der.mapping,
                    "word_agreement": pair.wordAgreement as Any? ?? NSNull(), "words_compared": pair.comparedWords,
                    "words_same_speaker": pair.sameSpeakerWords, "word_mapping": pair.wordMapping,
                ]
            },
        ]
    }
}
