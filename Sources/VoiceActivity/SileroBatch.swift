/// The silero model for many streams at once: the windows of the audio each detector will accept next,
/// computed ahead with every stream's windows in one onnxruntime call per step (a batch dimension), the
/// dynamic batching of inference servers on a CPU. The detectors then `accept` that audio and use the
/// results instead of running the model one window at a time; their segments are those of an unbatched
/// run (`SileroBatchTests`).
///
/// Per window, one call at batch 1 costs about as much as the model's arithmetic; at batch 32 the cost
/// per window is well under half (docs/benchmarks.md, "Batching across sessions").
public enum SileroBatch {
    /// Computes ahead for the audio each detector will accept next: `samples` follow what it accepted
    /// and what was prefetched before (the detector may then accept them in other pieces: a diarizer
    /// gathers pushes into blocks). Detectors on sherpa-onnx's engine are left alone. If a detector is
    /// then given other audio, what was computed ahead is dropped and it runs the model itself (never a
    /// wrong answer).
    public static func prefetch(_ items: [(detector: SileroVoiceActivityDetector, samples: UnsafeBufferPointer<Float>)]) {
        struct Job {
            var detector: SileroVoiceActivityDetector
            var stream: SileroStream
            var samples: UnsafeBufferPointer<Float>
            var plan: SileroStream.Plan
            var state: [Float]
            var results: [(probability: Float, state: [Float])] = []
            var failed = false
        }
        var jobs: [Job] = []
        for (detector, samples) in items {
            detector.state.withLock { state in
                guard case .onnxRuntime(let stream) = state.engine else { return }
                let plan = stream.plan(partial: state.window[0 ..< state.windowFill], samples: samples)
                jobs.append(Job(detector: detector, stream: stream, samples: samples, plan: plan, state: plan.start.state))
            }
        }
        // Streams of one model file go together; step t holds every stream's t-th window.
        var byModel: [ObjectIdentifier: [Int]] = [:]
        for (index, job) in jobs.enumerated() { byModel[ObjectIdentifier(job.stream.model), default: []].append(index) }
        for members in byModel.values {
            let model = jobs[members[0]].stream.model
            let steps = members.map { jobs[$0].plan.windows.count }.max() ?? 0
            for step in 0 ..< steps {
                let rows = members.filter { !jobs[$0].failed && jobs[$0].plan.windows.count > step }
                guard !rows.isEmpty else { continue }
                var windows: [Float] = []
                windows.reserveCapacity(rows.count * model.windowSamples)
                var states: [Float] = []
                states.reserveCapacity(rows.count * SileroModel.stateSize)
                for row in rows {
                    windows += jobs[row].plan.windows[step]
                    states += jobs[row].state
                }
                do {
                    let probabilities = try model.run(windows: windows, states: &states, count: rows.count)
                    for (position, row) in rows.enumerated() {
                        jobs[row].state = Array(states[position * SileroModel.stateSize ..< (position + 1) * SileroModel.stateSize])
                        jobs[row].results.append((probabilities[position], jobs[row].state))
                    }
                } catch {
                    // The detectors run these windows themselves at accept (and count the failure there).
                    for row in rows { jobs[row].failed = true }
                }
            }
        }
        for job in jobs where !job.failed {
            job.detector.state.withLock { _ in job.stream.extendLookahead(job.plan, samples: job.samples, results: job.results) }
        }
    }
}
