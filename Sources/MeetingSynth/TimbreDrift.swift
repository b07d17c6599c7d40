import DeterministicRandom

/// A slow change in each voice across a meeting: every word is resampled by a factor that ramps
/// linearly with the turn's place in the meeting, from 1 − `spanRatio`/2 to 1 + `spanRatio`/2 (or the
/// reverse, drawn per speaker from the seed).
///
/// Why resampling: it scales pitch and formants together, which is what a shorter or longer vocal
/// tract does, and vocal-tract length is what speaker embeddings key on (Kaldi's 0.9/1.1 speed
/// perturbation is counted as new speakers). A real person's voice moves less than that over a
/// meeting but moves all the same (register, tiredness, distance to the microphone), and a diarizer
/// that revises speakers live must not read one person's drift as a second person. The ramp is
/// centred on 1, so a voice's average is its preset.
public struct TimbreDrift: Sendable, Equatable {
    /// The factor's total change from the first turn to the last (0.1: 0.95 → 1.05).
    public var spanRatio: Double

    public init(spanRatio: Double) {
        self.spanRatio = spanRatio
    }

    /// The resampling factor for a speaker whose drift goes `upward` (or down), at `progress` 0…1
    /// (the turn's index over the last turn's index).
    public func factor(upward: Bool, progress: Double) -> Double {
        let centred = min(1, max(0, progress)) - 0.5
        return 1 + (upward ? 1 : -1) * spanRatio * centred
    }

    /// Whether each speaker's drift goes up, drawn in script order from a stream of its own so drift
    /// adds no draws to the timing or noise streams.
    static func directions(of speakerIDs: [String], seed: UInt64) -> [String: Bool] {
        var rng = SeededRandom.derived(from: seed, purpose: 5)
        return Dictionary(uniqueKeysWithValues: speakerIDs.map { ($0, rng.chance(0.5)) })
    }

    /// Audio read `factor` times as fast, by linear interpolation: a factor above 1 gives a shorter,
    /// higher word. Linear interpolation is enough here: factors stay within a few percent of 1, so
    /// the images it folds back lie near 8 kHz, where synthetic speech has little energy.
    public static func resample(_ audio: [Float], factor: Double) -> [Float] {
        guard factor > 0, factor != 1, audio.count > 1 else { return audio }
        let count = Int(Double(audio.count - 1) / factor) + 1
        var out = [Float](repeating: 0, count: count)
        for j in 0 ..< count {
            let position = Double(j) * factor
            let i = Int(position)
            let fraction = Float(position - Double(i))
            let next = min(i + 1, audio.count - 1)
            out[j] = audio[i] + (audio[next] - audio[i]) * fraction
        }
        return out
    }
}
