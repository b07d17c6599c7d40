import DiarizationScoring
import SpeakerSyncClient

/// Every figure `speakersync eval` reports for one recording.
public struct FileEvaluation: Sendable {
    public var id: String
    public var audioSeconds: Double
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
    public var firstLabelLatenciesSeconds: [Double]
    public var finalLabelLatenciesSeconds: [Double]
    public var chunkProcessingSeconds: [Double]
    public var realTimeFactor: Double?
    /// Server resident memory growth while this recording streamed, divided by the sessions running at once.
    public var memoryPerSessionBytes: Int?
    public var errors: [String]
    /// The conversation the session stored (nil when the caller did not say).
    public var conversationID: String?
    /// The final turns the server reported, scored above; kept for a timeline of truth against result.
    public var finalTurns: [SpeakerSegment]

    /// Scores one streamed session against its recording's truth.
    public init(recording: EvalRecording, transcript: LiveTranscript, stats: SessionStats,
                memoryPerSessionBytes: Int?, conversationID: String? = nil, errors: [String]) {
        let liveTurns = stats.liveTurns.map(SpeakerSegment.init)
        let finalTurns = stats.finalTurns.map(SpeakerSegment.init)
        id = recording.id
        audioSeconds = recording.audioSeconds
        let collar = DERConfig(collarSeconds: 0.25, skipOverlap: false)
        let uem = recording.uem
        finalDER = DiarizationErrorRate.score(reference: recording.reference, hypothesis: finalTurns, uem: uem, config: .default)
        finalDERCollar = DiarizationErrorRate.score(reference: recording.reference, hypothesis: finalTurns, uem: uem, config: collar)
        liveDERCollar = DiarizationErrorRate.score(reference: recording.reference, hypothesis: liveTurns, uem: uem, config: collar)
        jer = JaccardErrorRate.score(reference: recording.reference, hypothesis: finalTurns, uem: uem, config: .default).errorRate

        // Hypothesis words: what the device holds at the end, in the reference words' order.
        let hypothesis = transcript.words.map {
            ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker, isOverlapped: false)
        }.sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
        wder = WordDiarizationErrorRate.score(reference: recording.referenceWords, hypothesis: hypothesis)
        let overlapped = Set(recording.referenceWords.filter(\.isOverlapped).map(Self.key))
        wderOutsideOverlap = WordDiarizationErrorRate.score(
            reference: recording.referenceWords.filter { !$0.isOverlapped },
            hypothesis: hypothesis.filter { !overlapped.contains(Self.key($0)) })
        var talking = 0
        var overlapCount = 0
        for word in hypothesis where overlapped.contains(Self.key(word)) {
            overlapCount += 1
            let middle = (word.startSeconds + word.endSeconds) / 2
            let speakersTalking = Set(recording.reference.filter { $0.startSeconds <= middle && middle < $0.endSeconds }.map(\.speaker))
            if let label = word.speaker, let mapped = wder.mapping[label], speakersTalking.contains(mapped) { talking += 1 }
        }
        overlapWordCount = overlapCount
        overlapWordsWithATalkingSpeaker = talking
        wordCount = hypothesis.count
        unlabelledWordCount = hypothesis.filter { $0.speaker == nil }.count
        speakers = SpeakerCountError(reference: recording.reference, hypothesis: finalTurns, uem: uem)
        firstLabelLatenciesSeconds = stats.firstLabelLatenciesSeconds
        finalLabelLatenciesSeconds = stats.finalLabelLatenciesSeconds
        chunkProcessingSeconds = stats.chunkProcessingSeconds
        realTimeFactor = stats.realTimeFactor
        self.memoryPerSessionBytes = memoryPerSessionBytes
        self.errors = errors
        self.conversationID = conversationID
        self.finalTurns = finalTurns
    }

    static func key(_ word: ScoredWord) -> String {
        "\(word.text)|\(Int((word.startSeconds * 1000).rounded()))"
    }
}
