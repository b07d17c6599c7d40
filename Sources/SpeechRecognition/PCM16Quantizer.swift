import DeterministicRandom
/// Converts float samples to the 16-bit integers PocketSphinx takes, with optional triangular (TPDF)
/// dither from a fixed-seed generator so the same audio always quantises the same way.
///
/// `quantize` starts the dither sequence afresh on every call (a whole recording); `quantizeNext`
/// continues it, so a stream quantised chunk by chunk gets exactly the integers the whole recording
/// would have (what lets `StreamingRecognizer` match the batch recogniser).
struct PCM16Quantizer {
    var ditherSteps: Double
    var seed: UInt64 = 0x5EED_5EED_5EED_5EED
    /// The dither generator of `quantizeNext`, created at its first call.
    private var stream: SeededRandom?

    init(ditherSteps: Double, seed: UInt64 = 0x5EED_5EED_5EED_5EED) {
        self.ditherSteps = ditherSteps
        self.seed = seed
    }

    func quantize(_ samples: [Float]) -> [Int16] {
        var random = SeededRandom(seed: seed)
        return Self.quantize(samples, ditherSteps: ditherSteps, random: &random)
    }

    /// The next chunk of a stream: the dither sequence goes on from the previous chunk's last sample.
    mutating func quantizeNext(_ samples: some Collection<Float>) -> [Int16] {
        var random = stream ?? SeededRandom(seed: seed)
        defer { stream = random }
        return Self.quantize(samples, ditherSteps: ditherSteps, random: &random)
    }

    private static func quantize(_ samples: some Collection<Float>, ditherSteps: Double, random: inout SeededRandom) -> [Int16] {
        guard ditherSteps > 0 else {
            return samples.map { Int16(clamping: Int((Double($0) * 32768).rounded())) }
        }
        return samples.map { sample in
            // Difference of two uniform variables: triangular noise in (−ditherSteps, ditherSteps).
            let noise = (random.unit() - random.unit()) * ditherSteps
            return Int16(clamping: Int((Double(sample) * 32768 + noise).rounded()))
        }
    }
}
