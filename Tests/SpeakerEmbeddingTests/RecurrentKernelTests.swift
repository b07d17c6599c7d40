import CSpeakerEmbeddingKernels
import Testing

/// The C kernel behind every LSTM step: whichever path this CPU takes, it must add hidden · W onto the
/// gates as a plain double-precision product does, within what half-precision weights allow.
@Suite struct RecurrentKernelTests {
    /// A seeded generator, so a failure reproduces.
    struct LCG {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 1_000_000
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 8])
    func accumulatesTheProductForEveryBatchSize(batch: Int) {
        let hiddenSize = 256, width = 1024
        var random = LCG(state: UInt64(batch))
        let hidden = (0 ..< batch * hiddenSize).map { _ in random.next() }
        let weights = (0 ..< hiddenSize * width).map { _ in random.next() * 0.1 }
        let half = weights.map { Float16($0).bitPattern }
        let initial = (0 ..< batch * width).map { _ in random.next() }
        var gates = initial
        speakersync_recurrent_accumulate(hidden, Int32(batch), Int32(hiddenSize), weights, half, Int32(width), &gates)

        var worst = 0.0
        for b in 0 ..< batch {
            for j in 0 ..< width {
                var expected = Double(initial[b * width + j])
                var magnitude = abs(expected)
                for k in 0 ..< hiddenSize {
                    let term = Double(hidden[b * hiddenSize + k]) * Double(weights[k * width + j])
                    expected += term
                    magnitude += abs(term)
                }
                // Half-precision weights carry a relative error of at most 2⁻¹¹ each.
                worst = max(worst, abs(Double(gates[b * width + j]) - expected) / magnitude)
            }
        }
        let path = String(cString: speakersync_recurrent_kernel_name())
        print("recurrent kernel \(path), batch \(batch): worst error \(worst) of the terms' total magnitude")
        #expect(worst < 1.0 / 2048, "path \(path)")
    }
}
