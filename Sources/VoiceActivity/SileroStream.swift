/// One stream's silero model state when the model runs here (`VADEngine.onnxRuntime`): its recurrent
/// state, the step before the current one (the model reads 64 samples past a step, so a step is
/// classified once the next has arrived, as in sherpa-onnx), the gate that turns probabilities into
/// segments, and what `SileroBatch` computed ahead.
///
/// Computed ahead ("lookahead"): audio the caller will accept next, with the probability of every window
/// it completes and the model state after each. A consumer may accept that audio in other pieces than
/// it was prefetched in (the streaming diarizer gathers pushes into blocks); each accepted sample is
/// checked against it, and on the first difference the lookahead is dropped and the model runs itself.
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
    private var lookahead: Lookahead?
    /// Accepts and resets so far: a plan made before one of them no longer fits.
    private var generation = 0
    /// Windows whose probability came from the lookahead, and windows the model ran for here.
    private(set) var windowsComputedAhead = 0
    private(set) var windowsRunHere = 0
    /// Runs that failed (their windows count as silence); the first failure is kept for the log.
    private(set) var failureCount = 0
    private(set) var firstFailure: VoiceActivityError?

    struct Lookahead {
        /// Prefetched audio from the point accepted when it began, and how much of it is accepted since.
        var samples: [Float] = []
        var accepted = 0
        /// By step number (`stepsFed` when the window runs): the window's probability and the state after it.
        var results: [Int: (probability: Float, state: [Float])] = [:]
        var end: Cursor
    }

    /// Where the model stands after some audio: what the next prefetch continues from.
    struct Cursor {
        var state: [Float]
        var previousStep: [Float]
        var partial: [Float]
        var steps: Int
    }

    /// The windows a prefetch of `samples` runs, and where the model stands after them.
    struct Plan {
        var windows: [[Float]] = []
        var steps: [Int] = []
        var start: Cursor
        var end: Cursor
        var generation: Int
    }

    init(model: SileroModel, config: VADConfig) {
        self.model = model
        self.config = config
        gate = SileroSpeechGate(config: config)
    }

    /// The windows that `samples` (non-finite values read as 0) complete after what was accepted (whose
    /// partial step is `partial`) and what was already prefetched.
    func plan(partial: ArraySlice<Float>, samples: UnsafeBufferPointer<Float>) -> Plan {
        let start = lookahead?.end ?? Cursor(state: state, previousStep: previousStep, partial: Array(partial), steps: stepsFed)
        let step = config.windowSizeSamples, context = model.windowSamples - step
        var plan = Plan(start: start, end: start, generation: generation)
        plan.end.partial.reserveCapacity(step)
        for sample in samples {
            plan.end.partial.append(sample.isFinite ? sample : 0)
            if plan.end.partial.count == step {
                if !plan.end.previousStep.isEmpty {
                    plan.windows.append(plan.end.previousStep + plan.end.partial[0 ..< context])
                    plan.steps.append(plan.end.steps)
                }
                plan.end.previousStep = plan.end.partial
                plan.end.partial.removeAll(keepingCapacity: true)
                plan.end.steps += 1
            }
        }
        return plan
    }

    /// A plan's results (one probability and state per window): the lookahead grows by `samples`.
    /// Ignored when the lookahead moved since the plan was made.
    func extendLookahead(_ plan: Plan, samples: UnsafeBufferPointer<Float>, results: [(probability: Float, state: [Float])]) {
        guard results.count == plan.windows.count, plan.generation == generation else { return }
        var ahead = lookahead ?? Lookahead(end: plan.start)
        ahead.samples += samples.map { $0.isFinite ? $0 : 0 }
        for (step, result) in zip(plan.steps, results) { ahead.results[step] = result }
        ahead.end = plan.end
        ahead.end.state = results.last?.state ?? plan.start.state
        lookahead = ahead
    }

    /// An `accept` of `samples` (non-finite values already read as 0) begins: the lookahead stands only
    /// if it holds exactly these samples next.
    func beginAccept(samples: UnsafeBufferPointer<Float>) {
        generation += 1
        guard var ahead = lookahead else { return }
        let available = ahead.samples.count - ahead.accepted
        let checked = min(available, samples.count)
        let matches = ahead.samples[ahead.accepted ..< ahead.accepted + checked].elementsEqual(samples.prefix(checked).lazy.map { $0.isFinite ? $0 : 0 })
        guard matches else {
            lookahead = nil
            return
        }
        ahead.accepted += checked
        lookahead = ahead
    }

    /// The accept ended: a lookahead accepted to its end is done with.
    func endAccept() {
        if let ahead = lookahead, ahead.accepted >= ahead.samples.count, ahead.end.steps <= stepsFed { lookahead = nil }
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
        lookahead = nil
        generation += 1
    }

    private func probability(current step: UnsafeBufferPointer<Float>) -> Float {
        if let result = lookahead?.results.removeValue(forKey: stepsFed) {
            windowsComputedAhead += 1
            state = result.state
            return result.probability
        }
        let window = previousStep + step[0 ..< (model.windowSamples - step.count)]
        windowsRunHere += 1
        do {
            return try model.run(windows: window, states: &state, count: 1)[0]
        } catch {
            failureCount += 1
            if firstFailure == nil { firstFailure = error }
            return 0
        }
    }
}
