/// A stretch of speech on the stream's timeline.
public struct SpeechSpan: Sendable, Hashable {
    public var startSeconds: Double
    public var endSeconds: Double

    public init(startSeconds: Double, endSeconds: Double) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}

/// Voice activity as the diarizer needs it: closed speech spans, the start of speech still going on,
/// and how far the audio has been analysed. The plugin adapts silero VAD (on onnxruntime) to this;
/// tests use simple detectors.
public protocol SpeechDetector: AnyObject {
    func accept(samples: [Float])
    /// Speech spans that have ended since the last call, in time order.
    func popSegments() -> [SpeechSpan]
    /// Where the speech going on now began, or nil in silence.
    var ongoingSpeechStartSeconds: Double? { get }
    /// Audio analysed so far (seconds): speech state is known up to here.
    var analyzedSeconds: Double { get }
    /// No more audio: close any open speech.
    func flush()
}

/// Speaker embeddings for windows of 16 kHz audio, batched (one call per processing step).
public protocol SpeakerEmbedder: Sendable {
    var dimension: Int { get }
    func embed(_ windows: [[Float]]) throws -> [[Float]]
}
