/// Settings of `SileroVoiceActivityDetector`.
///
/// The defaults were chosen by measurement on the shared AMI and sample recordings (docs/vad.md): a
/// lower threshold than silero's usual 0.5 and a long minimum silence, because meeting audio is quiet
/// and far-field and a diarizer loses more from missed speech than from a little extra silence.
public struct VADConfig: Sendable, Hashable {
    /// Speech probability above which a window starts speech. Ongoing speech continues down to
    /// `threshold - 0.15` (sherpa-onnx's hysteresis).
    public var threshold: Float
    /// Silence that must follow speech before a segment closes; also the delay before `popSegments`
    /// returns it. `isSpeechActive` reports the live state without this delay.
    public var minSilenceDurationSeconds: Double
    /// Speech shorter than this does not start a segment.
    public var minSpeechDurationSeconds: Double
    /// Beyond this, sherpa-onnx raises the threshold to 0.9 and the minimum silence to 0.1 s so that a
    /// long monologue gets split at its next pause. 10 s rather than sherpa-onnx's usual 20: sherpa-onnx
    /// copies the whole ongoing segment on every 32 ms window, so its cost grows with the square of a
    /// segment's length, and the stricter threshold also ends turns that a pause-free hand-over had
    /// bridged (docs/vad.md, measured).
    public var maxSpeechDurationSeconds: Double
    /// Added before and after every segment (never overlapping the previous one, never past the audio
    /// received): silero's boundaries sit tight on voiced sound and clip soft onsets and endings.
    public var speechPadSeconds: Double
    /// Samples per model call. silero v5 at 16 kHz takes exactly 512.
    public var windowSizeSamples: Int
    /// sherpa-onnx's silero runs at 16 kHz only; resample before `accept`.
    public var sampleRate: Int
    /// onnxruntime intra-op threads per detector.
    public var numThreads: Int
    /// onnxruntime execution provider.
    public var provider: String
    /// The silero VAD ONNX model (`silero_vad.onnx` from the silero-vad wheel).
    public var modelPath: String
    /// The folder holding `libsherpa-onnx-c-api.so` and `libonnxruntime.so`.
    public var libraryDirectory: String
    /// Who runs the model: onnxruntime called from here (batchable across streams), or sherpa-onnx's
    /// detector. The segments are the same (`SileroSpeechGate`).
    public var engine: VADEngine = .onnxRuntime

    public init(
        threshold: Float = 0.3,
        minSilenceDurationSeconds: Double = 0.8,
        minSpeechDurationSeconds: Double = 0.1,
        maxSpeechDurationSeconds: Double = 10,
        speechPadSeconds: Double = 0.2,
        windowSizeSamples: Int = 512,
        sampleRate: Int = 16_000,
        numThreads: Int = 1,
        provider: String = "cpu",
        modelPath: String = VendorLocation.sileroModelPath(),
        libraryDirectory: String = VendorLocation.sherpaLibraryDirectory()
    ) {
        self.threshold = threshold
        self.minSilenceDurationSeconds = minSilenceDurationSeconds
        self.minSpeechDurationSeconds = minSpeechDurationSeconds
        self.maxSpeechDurationSeconds = maxSpeechDurationSeconds
        self.speechPadSeconds = speechPadSeconds
        self.windowSizeSamples = windowSizeSamples
        self.sampleRate = sampleRate
        self.numThreads = numThreads
        self.provider = provider
        self.modelPath = modelPath
        self.libraryDirectory = libraryDirectory
    }

    /// Measured defaults; model and library found through the environment or a `vendor/` folder.
    public static let `default` = VADConfig()

    /// Rejects what sherpa-onnx would refuse, and what it would answer by exiting the process
    /// (a sample rate other than 16 kHz, a window other than 512 for silero v5).
    func validate() throws(VoiceActivityError) {
        func invalid(_ message: String) -> VoiceActivityError { VoiceActivityError(.invalidConfig, message) }
        guard sampleRate == 16_000 else {
            throw invalid("sampleRate \(sampleRate): sherpa-onnx's silero VAD runs at 16000 Hz only; resample first")
        }
        guard windowSizeSamples == 512 else {
            throw invalid("windowSizeSamples \(windowSizeSamples): silero v5 at 16 kHz takes windows of 512 samples")
        }
        guard threshold.isFinite, threshold >= 0.01, threshold < 1 else {
            throw invalid("threshold \(threshold): must be in [0.01, 1)")
        }
        guard minSilenceDurationSeconds.isFinite, minSilenceDurationSeconds > 0 else {
            throw invalid("minSilenceDurationSeconds \(minSilenceDurationSeconds): must be > 0")
        }
        guard minSpeechDurationSeconds.isFinite, minSpeechDurationSeconds > 0 else {
            throw invalid("minSpeechDurationSeconds \(minSpeechDurationSeconds): must be > 0")
        }
        guard maxSpeechDurationSeconds.isFinite, maxSpeechDurationSeconds > minSpeechDurationSeconds else {
            throw invalid("maxSpeechDurationSeconds \(maxSpeechDurationSeconds): must exceed minSpeechDurationSeconds")
        }
        guard speechPadSeconds.isFinite, speechPadSeconds >= 0, speechPadSeconds <= 5 else {
            throw invalid("speechPadSeconds \(speechPadSeconds): must be in [0, 5]")
        }
        guard (1...64).contains(numThreads) else {
            throw invalid("numThreads \(numThreads): must be in 1...64")
        }
        guard !provider.isEmpty, !provider.utf8.contains(0), !modelPath.utf8.contains(0) else {
            throw invalid("provider and modelPath must be non-empty C strings")
        }
    }
}

/// Who runs the silero model for `SileroVoiceActivityDetector`.
public enum VADEngine: String, Sendable, Hashable, CaseIterable {
    /// onnxruntime's C API from this project (`SileroModel`): windows of many streams can share a call
    /// (`SileroBatch`), and no segment audio is copied per window.
    case onnxRuntime = "onnxruntime"
    /// sherpa-onnx's VoiceActivityDetector, which also copies the whole open segment on every window.
    case sherpaOnnx = "sherpa-onnx"
}
