/// Silero's speech probabilities turned into speech segments, exactly as sherpa-onnx 2.0.1 does it
/// (silero-vad-model.cc's IsSpeech and voice-activity-detector.cc's AcceptWaveform), so that the
/// VAD can run its model itself (batched across sessions, `SileroBatch`) and still give the segments
/// sherpa-onnx gives. Pure: one probability per model window in, segments out; the tests feed the same
/// audio to both and compare (`SileroOnnxEngineTests`).
///
/// Positions are in samples, on sherpa-onnx's timeline: its ring buffer's head and tail, where every
/// window appends one step (512 samples) and a segment starts two model windows plus the minimum
/// speech before the window that confirmed it. Counters are 32-bit in sherpa-onnx; Int here (they
/// overflow there after 37 hours at 16 kHz, here never).
public struct SileroSpeechGate: Sendable {
    public let stepSamples: Int
    /// The model's input: one step plus silero v5's 64 samples of context.
    public let modelWindowSamples: Int
    let baseThreshold: Float
    let baseMinSilenceSamples: Int
    let minSpeechSamples: Int
    let maxUtteranceSamples: Int
    let longUtteranceMinSilenceSamples: Int
    /// sherpa-onnx's settings once an utterance outgrows `maxUtteranceSamples`: they split it at its
    /// next short pause.
    static let longUtteranceThreshold: Float = 0.9
    static let longUtteranceMinSilenceSeconds: Float = 0.1

    // The model's hysteresis (IsSpeech).
    private var triggered = false
    private var currentSample = 0
    private var tempStart = 0
    private var tempEnd = 0
    private var threshold: Float
    private var minSilenceSamples: Int
    // The detector's segmentation (AcceptWaveform).
    private var start = -1
    private var head = 0
    private var tail = 0
    private var closed: [(startSample: Int64, sampleCount: Int)] = []

    public init(config: VADConfig) {
        let rate = Float(config.sampleRate)
        stepSamples = config.windowSizeSamples
        modelWindowSamples = config.windowSizeSamples + 64 * config.sampleRate / 16_000
        baseThreshold = config.threshold
        // sherpa-onnx multiplies in float and truncates to an integer: mirrored.
        baseMinSilenceSamples = Int(rate * Float(config.minSilenceDurationSeconds))
        minSpeechSamples = Int(rate * Float(config.minSpeechDurationSeconds))
        maxUtteranceSamples = Int(rate * Float(config.maxSpeechDurationSeconds))
        longUtteranceMinSilenceSamples = Int(rate * Self.longUtteranceMinSilenceSeconds)
        threshold = baseThreshold
        minSilenceSamples = baseMinSilenceSamples
    }

    /// Whether a segment is open (sherpa-onnx's IsSpeechDetected).
    public var isSpeechDetected: Bool { start != -1 }

    /// One model window's probability: the window covering the next step.
    public mutating func window(probability: Float) {
        if tail - head > maxUtteranceSamples {
            minSilenceSamples = longUtteranceMinSilenceSamples
            threshold = Self.longUtteranceThreshold
        } else {
            minSilenceSamples = baseMinSilenceSamples
            threshold = baseThreshold
        }
        tail += stepSamples
        if isSpeech(probability) {
            if start == -1 { start = max(tail - 2 * modelWindowSamples - minSpeechSamples, head) }
            return
        }
        if start != -1, tail > head {
            let end = tail - minSilenceSamples
            closed.append((Int64(start), max(0, end - start)))
            head = max(head, end)
        }
        if start == -1 {
            head += max(0, tail - 2 * modelWindowSamples - minSpeechSamples - head)
        }
        start = -1
    }

    /// Segments closed since the last call: start and length in samples.
    public mutating func popSegments() -> [(startSample: Int64, sampleCount: Int)] {
        defer { closed.removeAll(keepingCapacity: true) }
        return closed
    }

    /// Closes the open segment at the last step (sherpa-onnx's Flush; the hysteresis is kept).
    public mutating func flush() {
        guard start != -1, tail > head else { return }
        if tail > start {
            closed.append((Int64(start), tail - start))
            head = tail
            start = -1
        }
    }

    /// silero-vad-model.cc's IsSpeech, condition for condition (ties at the threshold fall through
    /// both tests, as there).
    private mutating func isSpeech(_ probability: Float) -> Bool {
        currentSample += stepSamples
        if probability > threshold, tempEnd != 0 { tempEnd = 0 }
        if probability > threshold, tempStart == 0 {
            tempStart = currentSample
            return false
        }
        if probability > threshold, tempStart != 0, !triggered {
            if currentSample - tempStart < minSpeechSamples { return false }
            triggered = true
            return true
        }
        if probability < threshold, !triggered {
            tempStart = 0
            tempEnd = 0
            return false
        }
        let negativeThreshold = max(threshold - 0.15, 0.01)
        if probability > negativeThreshold, triggered { return true }
        if probability < threshold, triggered {
            if tempEnd == 0 { tempEnd = currentSample }
            if currentSample - tempEnd < minSilenceSamples { return true }
            tempStart = 0
            tempEnd = 0
            triggered = false
            return false
        }
        return false
    }
}
