import Foundation
import DeterministicRandom

/// Seeded noise generators for `NoiseConfig`.
enum BackgroundNoise {
    /// Unit-variance noise of the given colour.
    static func generate(kind: NoiseConfig.Kind, count: Int, rng: inout SeededRandom) -> [Float] {
        var out = [Float](repeating: 0, count: count)
        switch kind {
        case .white:
            for i in 0 ..< count { out[i] = Float(gaussian(&rng)) }
        case .pink:
            // Paul Kellet's refined filter: white noise through parallel one-pole sections, −3 dB/octave.
            var b = [Double](repeating: 0, count: 7)
            for i in 0 ..< count {
                let white = gaussian(&rng)
                b[0] = 0.99886 * b[0] + white * 0.0555179
                b[1] = 0.99332 * b[1] + white * 0.0750759
                b[2] = 0.96900 * b[2] + white * 0.1538520
                b[3] = 0.86650 * b[3] + white * 0.3104856
                b[4] = 0.55000 * b[4] + white * 0.5329522
                b[5] = -0.7616 * b[5] - white * 0.0168980
                let pink = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + white * 0.5362
                b[6] = white * 0.115926
                out[i] = Float(pink)
            }
        }
        let power = out.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, count))
        let scale = power > 0 ? Float(1 / power.squareRoot()) : 0
        for i in 0 ..< count { out[i] *= scale }
        return out
    }

    /// Box–Muller from the seeded generator.
    static func gaussian(_ rng: inout SeededRandom) -> Double {
        let u1 = max(rng.unit(), 1e-300)
        let u2 = rng.unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
