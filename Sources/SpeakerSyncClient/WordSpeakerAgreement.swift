/// How well hypothesis speaker labels on words agree with the true speakers, after mapping each
/// hypothesis label to at most one true speaker (greedy one-to-one on co-occurrence counts, which
/// is optimal for the clear-cut cases the demo and tests use; the scoring library does Hungarian).
public struct WordSpeakerAgreement: Sendable, Equatable {
    public var wordCount: Int
    public var correctCount: Int
    public var unlabelledCount: Int
    /// hypothesis label → true speaker
    public var mapping: [String: String]

    public var accuracy: Double { wordCount == 0 ? 0 : Double(correctCount) / Double(wordCount) }

    /// `pairs`: (true speaker, hypothesis label or nil) for every word.
    public init(pairs: [(truth: String, hypothesis: String?)]) {
        var counts: [String: [String: Int]] = [:]
        for pair in pairs {
            guard let hypothesis = pair.hypothesis else { continue }
            counts[hypothesis, default: [:]][pair.truth, default: 0] += 1
        }
        var candidates: [(count: Int, hypothesis: String, truth: String)] = []
        for (hypothesis, truths) in counts {
            for (truth, count) in truths { candidates.append((count, hypothesis, truth)) }
        }
        candidates.sort { ($0.count, $1.hypothesis, $1.truth) > ($1.count, $0.hypothesis, $0.truth) }
        var mapping: [String: String] = [:]
        var usedTruths: Set<String> = []
        for candidate in candidates where mapping[candidate.hypothesis] == nil && !usedTruths.contains(candidate.truth) {
            mapping[candidate.hypothesis] = candidate.truth
            usedTruths.insert(candidate.truth)
        }
        self.mapping = mapping
        self.wordCount = pairs.count
        self.unlabelledCount = pairs.filter { $0.hypothesis == nil }.count
        self.correctCount = pairs.filter { pair in pair.hypothesis.flatMap { mapping[$0] } == pair.truth }.count
    }

    /// Each labelled word matched to the true word with the same text that starts at the same
    /// millisecond (the later one when two do); a labelled word with no such true word is left out.
    /// What `demo` and the sessions bench score a synthetic meeting's transcript with.
    public init(truth: [(text: String, startSeconds: Double, speaker: String)], labelled: [(text: String, startSeconds: Double, speaker: String?)]) {
        func key(_ text: String, _ startSeconds: Double) -> String { "\(text)|\(Int((startSeconds * 1000).rounded()))" }
        var speakerByKey: [String: String] = [:]
        for word in truth { speakerByKey[key(word.text, word.startSeconds)] = word.speaker }
        self.init(pairs: labelled.compactMap { word in speakerByKey[key(word.text, word.startSeconds)].map { ($0, word.speaker) } })
    }
}
