#if canImport(Speech)
import Speech

/// SFSpeechRecognizer's results as the kit's values: the only code here that touches the Speech
/// framework's classes, which are not Sendable, so they are read on the thread that delivered them.
/// Not compiled on the Linux machine this package is tested on (docs/client.md).
extension SpeechRecognizerSegment {
    public init(_ segment: SFTranscriptionSegment) {
        self.init(substring: segment.substring, timestamp: segment.timestamp, duration: segment.duration, confidence: segment.confidence)
    }
}

extension SpeechRecognizerResult {
    /// The best transcription. `speechRecognitionMetadata` (iOS 14, macOS 11; below the package's
    /// platforms) is set on the result that closes an utterance at a pause.
    public init(_ result: SFSpeechRecognitionResult) {
        self.init(segments: result.bestTranscription.segments.map(SpeechRecognizerSegment.init), isFinal: result.isFinal,
                  endsUtterance: result.speechRecognitionMetadata != nil)
    }
}

extension SpeechRecognizerFeed {
    /// A result of this feed's task (from `recognitionTask(with:resultHandler:)` or the delegate).
    public func send(_ result: SFSpeechRecognitionResult) {
        send(SpeechRecognizerResult(result))
    }
}
#endif
