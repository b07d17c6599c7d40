/// Bookkeeping between sherpa-onnx's view of a stream and what a streaming consumer needs, in samples:
/// how far the model has classified, where the ongoing speech began (before sherpa-onnx hands the
/// segment over, `minSilenceDurationSeconds` later), and closed segments padded without overlap.
///
/// Pure: the detector feeds it one event per model window, so it can be tested without the library.
/// Two numbers mirror sherpa-onnx 2.0.1 internals (voice-activity-detector.cc), checked against the
/// real library by the tests: the model reads `modelContextSamples` beyond each window (silero v5's 64),
/// so a window is classified only once the next one has arrived; and a segment opened at classified
/// position `p` starts at `max(p - onsetLookbackSamples, boundary)`, where the lookback is two model
/// windows (512 + 64 each) plus the minimum speech, and the boundary is the end of the last segment.
public struct SpeechRegionTracker: Sendable, Hashable {
    public let sampleRate: Int
    public let windowSizeSamples: Int
    public let modelContextSamples: Int
    public let onsetLookbackSamples: Int
    public let padSamples: Int

    /// Samples handed to `accept`, including a partial window not yet given to the model.
    public private(set) var receivedSamples = 0
    /// Samples given to the model, whole windows only.
    public private(set) var fedSamples = 0
    /// Samples the model has classified: the position `isSpeechActive` refers to.
    public private(set) var analyzedSamples = 0
    /// Unpadded start of the open segment, as sherpa-onnx will report it; nil outside speech.
    public private(set) var ongoingStartSample: Int?
    /// sherpa-onnx never starts a segment before this (its buffer head after the last segment).
    private var boundarySample = 0
    /// End of the last segment handed out, padding included.
    private var emittedEndSample = 0

    public init(sampleRate: Int, windowSizeSamples: Int, modelContextSamples: Int, onsetLookbackSamples: Int, padSamples: Int) {
        self.sampleRate = sampleRate
        self.windowSizeSamples = windowSizeSamples
        self.modelContextSamples = modelContextSamples
        self.onsetLookbackSamples = onsetLookbackSamples
        self.padSamples = padSamples
    }

    /// The tracker for a `VADConfig`, with sherpa-onnx 2.0.1's silero v5 numbers.
    public init(config: VADConfig) {
        let context = 64 * config.sampleRate / 16_000
        // sherpa-onnx computes this in float and truncates: mirror it.
        let minSpeech = Int(Float(config.sampleRate) * Float(config.minSpeechDurationSeconds))
        self.init(
            sampleRate: config.sampleRate, windowSizeSamples: config.windowSizeSamples, modelContextSamples: context,
            onsetLookbackSamples: 2 * (config.windowSizeSamples + context) + minSpeech,
            padSamples: Int((config.speechPadSeconds * Double(config.sampleRate)).rounded()))
    }

    public var isSpeechActive: Bool { ongoingStartSample != nil }

    /// Start of the ongoing speech as the segment will be reported (padded); nil outside speech.
    public var ongoingSpeechStartSeconds: Double? {
        ongoingStartSample.map { seconds(paddedStart($0)) }
    }

    public mutating func received(sampleCount: Int) {
        receivedSamples += sampleCount
    }

    /// One window went to the model; `speechDetected` is the detector's state after it.
    public mutating func windowFed(speechDetected: Bool) {
        fedSamples += windowSizeSamples
        let firstInput = windowSizeSamples + modelContextSamples
        analyzedSamples = fedSamples < firstInput ? 0 : ((fedSamples - firstInput) / windowSizeSamples + 1) * windowSizeSamples
        if speechDetected {
            if ongoingStartSample == nil {
                ongoingStartSample = max(analyzedSamples - onsetLookbackSamples, boundarySample)
            }
        } else {
            ongoingStartSample = nil
        }
    }

    /// A segment sherpa-onnx closed. Its end is padded up to `limitSample` at most (the classified
    /// position while streaming, all received audio at a flush), its start back to the previous segment's
    /// end at most. Nil when padding of the previous segment already covers all of it.
    public mutating func closed(startSample: Int, sampleCount: Int, limitSample: Int) -> SpeechSegment? {
        let end = startSample + sampleCount
        boundarySample = max(boundarySample, end)
        let paddedEnd = max(min(end + padSamples, limitSample), end)
        let start = paddedStart(startSample)
        guard paddedEnd > start else { return nil }
        emittedEndSample = paddedEnd
        return SpeechSegment(startSeconds: seconds(start), endSeconds: seconds(paddedEnd))
    }

    /// sherpa-onnx's Flush closed the open segment (if any) at the classified position.
    public mutating func flushed() {
        if ongoingStartSample != nil { boundarySample = max(boundarySample, analyzedSamples) }
        ongoingStartSample = nil
    }

    private func paddedStart(_ start: Int) -> Int {
        max(start - padSamples, emittedEndSample, 0)
    }

    private func seconds(_ samples: Int) -> Double {
        Double(samples) / Double(sampleRate)
    }
}
