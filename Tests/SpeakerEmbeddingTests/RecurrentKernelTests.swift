import CSpeakerEmbeddingKernels
import Testing

@testable import SpeakerEmbedding

/// The C kernel behind every LSTM step: on every path this CPU runs, it must add hidden · W onto the
/// gates as a plain double-precision product does, within what the path's weight format allows.
@Suite struct RecurrentKernelTests {
    /// A seeded generator, so a failure reproduces.
    struct LCG {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 1_000_000
        }
    }

    static let allPaths: [Int32] = [
        Int32(SPEAKERSYNC_RECURRENT_GENERIC_F32.rawValue), Int32(SPEAKERSYNC_RECURRENT_AVX2_F16.rawValue),
        Int32(SPEAKERSYNC_RECURRENT_AVX512_F16.rawValue),
    ]

    /// The worst error a path may make, as a fraction of the terms' total magnitude: float32 rounding,
    /// or half-precision weights (relative error ≤ 2⁻¹¹ each).
    static func bound(_ path: Int32) -> Double {
        path == Int32(SPEAKERSYNC_RECURRENT_GENERIC_F32.rawValue) ? 1e-5 : 1.0 / 2048
    }

    @Test(arguments: [1, 2, 3, 4, 5, 8])
    func accumulatesTheProductOnEverySupportedPath(batch: Int) {
        let hiddenSize = 256, width = 1024
        var random = LCG(state: UInt64(batch))
        let hidden = (0 ..< batch * hiddenSize).map { _ in random.next() }
        let weights = (0 ..< hiddenSize * width).map { _ in random.next() * 0.1 }
        let initial = (0 ..< batch * width).map { _ in random.next() }
        let supported = Self.allPaths.filter { speakersync_recurrent_path_supported($0) == 1 }
        #expect(supported.contains(Int32(SPEAKERSYNC_RECURRENT_GENERIC_F32.rawValue)))
        for path in supported {
            let kernel = RecurrentKernel(weights: weights, hiddenSize: hiddenSize, width: width, path: path)
            var gates = initial
            hidden.withUnsafeBufferPointer { hidden in
                gates.withUnsafeMutableBufferPointer { kernel.accumulate(hidden: hidden.baseAddress!, batch: batch, into: $0.baseAddress!) }
            }
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
                    worst = max(worst, abs(Double(gates[b * width + j]) - expected) / magnitude)
                }
            }
            print("recurrent kernel \(kernel.pathName), batch \(batch): worst error \(worst) of the terms' total magnitude")
            #expect(worst < Self.bound(path), "path \(kernel.pathName)")
        }
    }

    @Test func theBestPathIsSupportedAndNamed() {
        let best = speakersync_recurrent_best_path()
        #expect(speakersync_recurrent_path_supported(best) == 1)
        #expect(String(cString: speakersync_recurrent_path_name(best)) != "unknown")
        #expect(speakersync_recurrent_path_supported(99) == 0)
        #expect(String(cString: speakersync_recurrent_path_name(99)) == "unknown")
    }
}
