/// One stream's silero model state when the model runs here (`VADEngine.onnxRuntime`): its recurrent
/// state, the step before the current one (the model reads 64 samples past a step, so a step is
/// classified once the next has arrived, as in sherpa-onnx), and the gate that turns probabilities into
/// segments.
///
/// `@unchecked Sendable`: every mutable member is touched only under the owning detector's lock
/// (`SileroBatch` too takes it to read and to hand results over); `model` is immutable and Sendable.
final class SileroStream: @unchecked Sendable {
    let model: SileroModel
    private(set) var gate: SileroSpeechGate
    private let config: VADConfig
    private var state = [Float](repeating: 0, count: SileroModel.stateSize)
    /// The last step fed; empty before the first.
    private var previousStep: [Float] = []
    private(set) var stepsFed = 0
    private var prefetched: Prefetch?
    /// Runs that failed (their windows count as silence); the first failure is kept for the log.
    private(set) var failureCount = 0
    private(set) var firstFailure: VoiceActivityError?

    /// What `SileroBatch` computed ahead for the next `accept`: valid only for exactly these samples,
    /// from exactly this point.
    struct Prefetch {
        var samples: [Float]
        var stepsFed: Int
        var windowFill: Int
        var probabilities: [Float]
        var state: [Float]
        var used = 0
    }

    init(model: SileroModel, config: VADConfig) {
        self.model = model
        self.config = config
        gate = SileroSpeechGate(config: config)
    }

    /// The model inputs that feeding `samples` (non-finite values already read as 0) after a partial
    /// step of `partial` would run, in order, and the state they start from.
    func pendingWindows(partial: ArraySlice<Float>, samples: UnsafeBufferPointer<Float>) -> (windows: [[Float]], state: [Float]) {
        let step = config.windowSizeSamples, context = model.windowSamples - step
        var windows: [[Float]] = []
        var previous = previousStep
        var current = Array(partial)
        current.reserveCapacity(step)
        for sample in samples {
            current.append(sample.isFinite ? sample : 0)
            if current.count == step {
                if !previous.isEmpty { windows.append(previous + current[0 ..< context]) }
                previous = current
                current.removeAll(keepingCapacity: true)
            }
        }
        return (windows, state)
    }

    func setPrefetch(_ prefetch: Prefetch) {
        prefetched = prefetch
    }

    /// An `accept` of `samples` begins at `windowFill`: the prefetched results stand only if they were
    /// computed for exactly this.
    func beginAccept(samples: UnsafeBufferPointer<Float>, windowFill: Int) {
        guard let prefetch = prefetched else { return }
        if prefetch.stepsFed != stepsFed || prefetch.windowFill != windowFill || !prefetch.samples.elementsEqual(samples) {
            prefetched = nil
        }
    }

    /// The accept ended: the state moves to where the prefetched run left it.
    func endAccept() {
        guard let prefetch = prefetched else { return }
        if prefetch.used == prefetch.probabilities.count { state = prefetch.state }
        prefetched = nil
    }

    /// One whole step (`config.windowSizeSamples` samples) arrives.
    func feed(step: UnsafeBufferPointer<Float>) {
        defer {
            previousStep = Array(step)
            stepsFed += 1
        }
        guard !previousStep.isEmpty else { return }
        gate.window(probability: probability(current: step))
    }

    func popSegments() -> [(startSample: Int64, sampleCount: Int)] { gate.popSegments() }
    func flush() { gate.flush() }

    func reset() {
        gate = SileroSpeechGate(config: config)
        state = [Float](repeating: 0, count: SileroModel.stateSize)
        previousStep = []
        stepsFed = 0
        prefetched = nil
    }

    private func probability(current step: UnsafeBufferPointer<Float>) -> Float {
        if var prefetch = prefetched, prefetch.used < prefetch.probabilities.count {
            defer {
                prefetch.used += 1
                prefetched = prefetch
            }
            return prefetch.probabilities[prefetch.used]
        }
        let window = previousStep + step[0 ..< (model.windowSamples - step.count)]
        do {
            return try model.run(windows: window, states: &state, count: 1)[0]
        } catch {
            failureCount += 1
            if firstFailure == nil { firstFailure = error }
            return 0
        }
    }
}
