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

    /// Scores one streamed session against its recording's truth (`SessionScore`, which the console's
    /// test recordings use too).
    public init(recording: EvalRecording, transcript: LiveTranscript, stats: SessionStats,
                memoryPerSessionBytes: Int?, conversationID: String? = nil, errors: [String]) {
        let liveTurns = stats.liveTurns.map(SpeakerSegment.init)
        let finalTurns = stats.finalTurns.map(SpeakerSegment.init)
        id = recording.id
        audioSeconds = recording.audioSeconds
        // Hypothesis words: what the device holds at the end.
        let score = SessionScore(
            reference: recording.reference, uem: recording.uem, referenceWords: recording.referenceWords,
            hypothesisWords: transcript.words.map {
                ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker, isOverlapped: false)
            },
            liveTurns: liveTurns, finalTurns: finalTurns)
        finalDER = score.finalDER
        finalDERCollar = score.finalDERCollar
        liveDERCollar = score.liveDERCollar
        jer = score.jer
        wder = score.wder
        wderOutsideOverlap = score.wderOutsideOverlap
        overlapWordCount = score.overlapWordCount
        overlapWordsWithATalkingSpeaker = score.overlapWordsWithATalkingSpeaker
        wordCount = score.wordCount
        unlabelledWordCount = score.unlabelledWordCount
        speakers = score.speakers
        firstLabelLatenciesSeconds = stats.firstLabelLatenciesSeconds
        finalLabelLatenciesSeconds = stats.finalLabelLatenciesSeconds
        chunkProcessingSeconds = stats.chunkProcessingSeconds
        realTimeFactor = stats.realTimeFactor
        self.memoryPerSessionBytes = memoryPerSessionBytes
        self.errors = errors
        self.conversationID = conversationID
        self.finalTurns = finalTurns
    }
}
