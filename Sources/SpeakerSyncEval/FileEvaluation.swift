import DiarizationScoring
import SpeakerSyncClient

/// Every figure `speakersync eval` reports for one recording: its `SessionScore` (read through, as
/// `evaluation.finalDER`; the console's test recordings report the same score) and the session's own
/// figures beside it.
@dynamicMemberLookup
public struct FileEvaluation: Sendable {
    public var id: String
    public var audioSeconds: Double
    /// The turns and words against the recording's truth.
    public var score: SessionScore
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
        score = SessionScore(
            reference: recording.reference, uem: recording.uem, referenceWords: recording.referenceWords,
            hypothesisWords: transcript.words.map {
                ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker, isOverlapped: false)
            },
            liveTurns: liveTurns, finalTurns: finalTurns)
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

extension FileEvaluation {
    public subscript<Value>(dynamicMember figure: KeyPath<SessionScore, Value>) -> Value { score[keyPath: figure] }
}
