/// Converts float samples to the 16-bit integers PocketSphinx takes, with optional triangular (TPDF)
/// dither from a fixed-seed generator so the same audio always quantises the same way.
struct PCM16Quantizer {
    var ditherSteps: Double
    var seed: UInt64 = 0x5EED_5EED_5EED_5EED

    func quantize(_ samples: [Float]) -> [Int16] {
        guard ditherSteps > 0 else {
            return samples.map { Int16(clamping: Int((Double($0) * 32768).rounded())) }
        }
        var state = seed
        return samples.map { sample in
            // Difference of two uniform variables: triangular noise in (−ditherSteps, ditherSteps).
            let noise = (Self.uniform(&state) - Self.uniform(&state)) * ditherSteps
            return Int16(clamping: Int((Double(sample) * 32768 + noise).rounded()))
        }
    }

    /// SplitMix64 step mapped to [0, 1).
    static func uniform(_ state: inout UInt64) -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
