/// One `SFSpeechRecognitionTask`'s results as the session's `words` messages. Pure: no Speech framework,
/// no session; `SpeechRecognizerFeed` sends what it returns.
///
/// Why it is needed:
/// - **Times.** A task's segment times count from the task's own first audio, and a task stops after
///   about a minute, so apps start a new one and the times start again from 0. Each task's timeline
///   is therefore built with where its audio began on the session's audio (`taskStartSeconds`), and
///   every word is shifted by it.
/// - **Result ids.** A task publishes partial results, each the whole transcription so far, then a final
///   one. They are one result (`sf<ms of the task start>-<utterance>`), so each revision replaces the
///   previous one on the server. An utterance the recogniser closed at a pause (`endsUtterance`) keeps
///   its id and the words after it get the next one; otherwise the fresh transcription that follows
///   would replace, and lose, the closed one.
/// - **Noise.** Segments without text are dropped, as is a segment repeating one already in the same
///   result (same text and times); a result that changes nothing (a repeated delivery) sends nothing.
public struct SpeechRecognizerTimeline: Sendable {
    /// Where the task's first audio lies on the session's audio (seconds from the session's first sample).
    public let taskStartSeconds: Double
    /// false: only results that close an utterance or the task are sent. On recent iOS, partial results'
    /// segments carry placeholder times (0, then steps of about 10 ms) and confidence 0; their words
    /// are then labelled at the wrong time until the utterance's closing result replaces them.
    public let partialResults: Bool
    /// The utterance (within the task) that the next result belongs to.
    public private(set) var utterance = 0
    /// Set by the final result or `finish()`: results after it are ignored.
    public private(set) var isFinished = false
    /// The last revision returned for the current utterance.
    private var sent: SpeechRecognizerRevision?
    /// The current utterance's latest revision, returned or not (partial results not sent): what
    /// `finish()` commits.
    private var latest: SpeechRecognizerRevision?
    /// The last result closed the utterance: a different one starts the next.
    private var utteranceClosed = false

    public init(taskStartSeconds: Double, partialResults: Bool = true) {
        self.taskStartSeconds = taskStartSeconds.isFinite ? max(0, taskStartSeconds) : 0
        self.partialResults = partialResults
    }

    /// The revision `result` makes, or nil when it changes nothing (or arrives after the task finished).
    public mutating func revision(for result: SpeechRecognizerResult) -> SpeechRecognizerRevision? {
        guard !isFinished else { return nil }
        let words = Self.words(result.segments, taskStartSeconds: taskStartSeconds)
        let closes = result.isFinal || result.endsUtterance
        if utteranceClosed, let sent, words != sent.words || !closes {
            utterance += 1
            self.sent = nil
            latest = nil
        }
        utteranceClosed = closes
        if result.isFinal { isFinished = true }
        let revision = SpeechRecognizerRevision(resultID: Self.resultID(taskStartSeconds: taskStartSeconds, utterance: utterance),
                                                words: words, isFinal: closes)
        latest = revision
        guard closes || partialResults else { return nil }
        // A new utterance with no words has nothing to replace; a repeat has nothing to add.
        if sent == nil ? words.isEmpty : revision == sent { return nil }
        sent = revision
        return revision
    }

    /// The task ended without a final result (cancelled, failed, or the app moved on): the open
    /// utterance's latest revision, now final, so the server does not keep it volatile (with
    /// `partialResults` false: so the server hears it at all). Nil when the utterance is closed, or
    /// has no words and none were sent.
    public mutating func finish() -> SpeechRecognizerRevision? {
        guard !isFinished else { return nil }
        isFinished = true
        guard var last = latest, !last.isFinal, sent != nil || !last.words.isEmpty else { return nil }
        last.isFinal = true
        sent = last
        latest = last
        return last
    }

    /// `sf<milliseconds of the task's start>-<utterance>`: stable across a result's partial and final
    /// versions and across reconnects; distinct from SpeechTranscriber's `r<ms>` ids.
    public static func resultID(taskStartSeconds: Double, utterance: Int) -> String {
        "sf\(Int64((taskStartSeconds * 1000).rounded()))-\(utterance)"
    }

    /// The segments as words on the session's timeline. What the server would refuse with
    /// `invalid_timestamp` or `invalid_field` (and with it the whole message) is mended or left out.
    static func words(_ segments: [SpeechRecognizerSegment], taskStartSeconds: Double) -> [SpokenWord] {
        var words: [SpokenWord] = []
        var seen = Set<SpeechRecognizerSegment>()
        for segment in segments {
            let text = trimmed(segment.substring)
            guard !text.isEmpty, segment.timestamp.isFinite, segment.timestamp >= 0 else { continue }
            let duration = segment.duration.isFinite ? max(0, segment.duration) : 0
            guard seen.insert(SpeechRecognizerSegment(substring: text, timestamp: segment.timestamp, duration: duration, confidence: 0)).inserted else {
                continue
            }
            let start = taskStartSeconds + segment.timestamp
            words.append(SpokenWord(text: text, startSeconds: start, endSeconds: start + duration, confidence: confidence(segment.confidence)))
        }
        return words
    }

    /// Without leading and trailing white space (the recogniser pads some segments).
    static func trimmed(_ text: String) -> String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(text[first...last])
    }

    /// 0 is Apple's "no recognition" (every partial result's value), not a judgement that the word is
    /// wrong: sent as absent. Anything outside 0…1 (which the server refuses) likewise.
    static func confidence(_ value: Float) -> Double? {
        guard value.isFinite, value > 0, value <= 1 else { return nil }
        return Double(value)
    }
}
