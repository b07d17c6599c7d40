/// The silero model for many streams at once: what each detector's next `accept(samples:)` would run,
/// computed ahead with every stream's windows in one onnxruntime call per step (a batch dimension), the
/// dynamic batching of inference servers on a CPU. The detectors then `accept` exactly those samples
/// and use the results instead of running the model one window at a time; their segments are those of
/// an unbatched run (`SileroBatchTests`).
///
/// Per window, one call at batch 1 costs about as much as the model's arithmetic; at batch 32 the cost
/// per window is well under half (docs/benchmarks.md, "Batching across sessions").
public enum SileroBatch {
    /// Computes ahead for each detector's next `accept` of `samples`. Detectors on sherpa-onnx's engine,
    /// or on another model file, are left alone (they run at accept as usual). The caller must not
    /// feed these detectors between this call and their accept; if it does, or accepts other samples,
    /// the result is discarded and accept runs the model itself (never a wrong answer).
    public static func prefetch(_ items: [(detector: SileroVoiceActivityDetector, samples: UnsafeBufferPointer<Float>)]) {
        struct Job {
            var detector: SileroVoiceActivityDetector
            var stream: SileroStream
            var samples: [Float]
            var stepsFed: Int
            var windowFill: Int
            var windows: [[Float]]
            var state: [Float]
            var probabilities: [Float] = []
            var failed = false
        }
        var jobs: [Job] = []
        for (detector, samples) in items {
            detector.state.withLock { state in
                guard case .onnxRuntime(let stream) = state.engine else { return }
                let pending = stream.pendingWindows(partial: state.window[0 ..< state.windowFill], samples: samples)
                jobs.append(Job(detector: detector, stream: stream, samples: Array(samples), stepsFed: stream.stepsFed, windowFill: state.windowFill,
                                windows: pending.windows, state: pending.state))
            }
        }
        // Streams of one model file go together; step t holds every stream's t-th window.
        var byModel: [ObjectIdentifier: [Int]] = [:]
        for (index, job) in jobs.enumerated() { byModel[ObjectIdentifier(job.stream.model), default: []].append(index) }
        for members in byModel.values {
            let model = jobs[members[0]].stream.model
            let steps = members.map { jobs[$0].windows.count }.max() ?? 0
            for step in 0 ..< steps {
                let rows = members.filter { !jobs[$0].failed && jobs[$0].windows.count > step }
                guard !rows.isEmpty else { continue }
                var windows: [Float] = []
                windows.reserveCapacity(rows.count * model.windowSamples)
                var states: [Float] = []
                states.reserveCapacity(rows.count * SileroModel.stateSize)
                for row in rows {
                    windows += jobs[row].windows[step]
                    states += jobs[row].state
                }
                do {
                    let probabilities = try model.run(windows: windows, states: &states, count: rows.count)
                    for (position, row) in rows.enumerated() {
                        jobs[row].probabilities.append(probabilities[position])
                        jobs[row].state = Array(states[position * SileroModel.stateSize ..< (position + 1) * SileroModel.stateSize])
                    }
                } catch {
                    // The detectors run these windows themselves at accept (and count the failure there).
                    for row in rows { jobs[row].failed = true }
                }
            }
        }
        for job in jobs where !job.failed {
            job.detector.state.withLock { _ in
                job.stream.setPrefetch(SileroStream.Prefetch(samples: job.samples, stepsFed: job.stepsFed, windowFill: job.windowFill,
                                                            probabilities: job.probabilities, state: job.state))
            }
        }
    }
}
