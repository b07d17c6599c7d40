/// One `SFTranscriptionSegment` as the kit reads it: its fields copied into a Sendable value, so the
/// mapping onto the session's timeline (`SpeechRecognizerTimeline`) is plain Swift, tested on Linux,
/// and the Speech framework's classes never leave the thread that delivered them.
/// `SFSpeechRecognizerAdapter.swift` fills it from the real segment on Apple platforms.
public struct SpeechRecognizerSegment: Sendable, Hashable {
    /// The segment's text (usually one word; with `addsPunctuation` it may carry the punctuation).
    public var substring: String
    /// Seconds from the first audio of the recognition task that produced it (not of the session).
    public var timestamp: Double
    /// Seconds.
    public var duration: Double
    /// 0…1; Apple documents 0 as "no recognition", which is what partial results carry.
    public var confidence: Float

    public init(substring: String, timestamp: Double, duration: Double, confidence: Float) {
        self.substring = substring
        self.timestamp = timestamp
        self.duration = duration
        self.confidence = confidence
    }
}

/// One `SFSpeechRecognitionResult` as the kit reads it: the best transcription's segments and how far
/// the recogniser has committed to them.
public struct SpeechRecognizerResult: Sendable, Hashable {
    /// `bestTranscription.segments`, in order.
    public var segments: [SpeechRecognizerSegment]
    /// `isFinal`: the task's last result; nothing follows it.
    public var isFinal: Bool
    /// `speechRecognitionMetadata != nil` on a result that is not final: the recogniser closed an
    /// utterance at a pause. Since iOS 17 or 18 the task then goes on with a transcription that starts
    /// afresh (only the words after the pause), so what came before must stay under its own result id.
    public var endsUtterance: Bool

    public init(segments: [SpeechRecognizerSegment], isFinal: Bool, endsUtterance: Bool = false) {
        self.segments = segments
        self.isFinal = isFinal
        self.endsUtterance = endsUtterance
    }
}

/// What one result becomes: exactly one `words` message (`SpeakerSyncSession.send(words:resultID:isFinal:)`).
public struct SpeechRecognizerRevision: Sendable, Hashable {
    public var resultID: String
    /// On the session's timeline (seconds from the first sample given to the session).
    public var words: [SpokenWord]
    public var isFinal: Bool

    public init(resultID: String, words: [SpokenWord], isFinal: Bool) {
        self.resultID = resultID
        self.words = words
        self.isFinal = isFinal
    }
}
