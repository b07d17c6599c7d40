/// Every figure one streamed session scores against its recording's truth: the turns the session
/// reported (final, and as first published live) against the reference turns, and the words the
/// device holds at the end against the reference words. What `speakersync eval` reports per file and
/// what the console's test recordings report per provider, computed in one place so both agree.
public struct SessionScore: Sendable, Hashable {
    /// Final turns against the reference, overlap scored, at collar 0 and 0.25 s.
    public var finalDER: DERComponents
    public var finalDERCollar: DERComponents
    /// The turns as first published (live), collar 0.25 s.
    public var liveDERCollar: DERComponents
    /// Jaccard error rate of the final turns, collar 0.
    public var jer: Double
    /// WDER over all words (exact truth for synthetic meetings; midpoint reference speaker otherwise).
    public var wder: WDERResult
    /// WDER over the words outside overlapped reference speech.
    public var wderOutsideOverlap: WDERResult
    /// Words in overlapped reference speech, and how many of them carry one of the speakers talking
    /// (under the WDER speaker mapping).
    public var overlapWordCount: Int
    public var overlapWordsWithATalkingSpeaker: Int
    public var wordCount: Int
    public var unlabelledWordCount: Int
    public var speakers: SpeakerCountError
    /// The people shown live under a number of their own, and how many of them still have it at the end.
    public var numbersKept: SpeakerNumberKeeping

    /// The collar of the collared figures: a quarter second, the field's usual forgiveness of turn edges.
    public static let collarSeconds = 0.25

    /// - Parameters:
    ///   - uem: the scored region; nil scores the whole extent of reference and hypothesis.
    ///   - referenceWords: the device's words with their true speakers.
    ///   - hypothesisWords: the words as the device holds them at the end, with the speakers it got
    ///     (any order: they are put in time order here).
    ///   - liveTurns, finalTurns: the session's turns as first published and at the end.
    public init(reference: [SpeakerSegment], uem: [TimeSpan]?, referenceWords: [ScoredWord], hypothesisWords: [ScoredWord],
                liveTurns: [SpeakerSegment], finalTurns: [SpeakerSegment]) {
        let collar = DERConfig(collarSeconds: Self.collarSeconds, skipOverlap: false)
        finalDER = DiarizationErrorRate.score(reference: reference, hypothesis: finalTurns, uem: uem, config: .default)
        finalDERCollar = DiarizationErrorRate.score(reference: reference, hypothesis: finalTurns, uem: uem, config: collar)
        liveDERCollar = DiarizationErrorRate.score(reference: reference, hypothesis: liveTurns, uem: uem, config: collar)
        jer = JaccardErrorRate.score(reference: reference, hypothesis: finalTurns, uem: uem, config: .default).errorRate

        // In the reference words' order (time), so the alignment pairs them up.
        let hypothesis = hypothesisWords.sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
        wder = WordDiarizationErrorRate.score(reference: referenceWords, hypothesis: hypothesis)
        let overlapped = Set(referenceWords.filter(\.isOverlapped).map(Self.key))
        wderOutsideOverlap = WordDiarizationErrorRate.score(
            reference: referenceWords.filter { !$0.isOverlapped },
            hypothesis: hypothesis.filter { !overlapped.contains(Self.key($0)) })
        var talking = 0
        var overlapCount = 0
        for word in hypothesis where overlapped.contains(Self.key(word)) {
            overlapCount += 1
            let middle = (word.startSeconds + word.endSeconds) / 2
            let speakersTalking = Set(reference.filter { $0.startSeconds <= middle && middle < $0.endSeconds }.map(\.speaker))
            if let label = word.speaker, let mapped = wder.mapping[label], speakersTalking.contains(mapped) { talking += 1 }
        }
        overlapWordCount = overlapCount
        overlapWordsWithATalkingSpeaker = talking
        wordCount = hypothesis.count
        unlabelledWordCount = hypothesis.filter { $0.speaker == nil }.count
        speakers = SpeakerCountError(reference: reference, hypothesis: finalTurns, uem: uem)
        numbersKept = SpeakerNumberKeeping(reference: reference, liveTurns: liveTurns, finalTurns: finalTurns, uem: uem)
    }

    /// A word's identity across reference and hypothesis: its text and start to the millisecond.
    static func key(_ word: ScoredWord) -> String {
        "\(word.text)|\(Int((word.startSeconds * 1000).rounded()))"
    }
}
