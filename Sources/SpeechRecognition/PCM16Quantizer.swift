import DeterministicRandom
/// Converts float samples to the 16-bit integers PocketSphinx takes, with optional triangular (TPDF)
/// dither from a fixed-seed generator so the same audio always quantises the same way.
struct PCM16Quantizer {
    var ditherSteps: Double
    var seed: UInt64 = 0x5EED_5EED_5EED_5EED

    func quantize(_ samples: [Float]) -> [Int16] {
        guard ditherSteps > 0 else {
            return samples.map { Int16(clamping: Int((Double($0) * 32768).rounded())) }
        }
        var random = SeededRandom(seed: seed)
        return samples.map { sample in
            // Difference of two uniform variables: triangular noise in (−ditherSteps, ditherSteps).
            let noise = (random.unit() - random.unit()) * ditherSteps
            return Int16(clamping: Int((Double(sample) * 32768 + noise).rounded()))
        }
    }

}
