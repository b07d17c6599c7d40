import Foundation

/// resemblyzer's `normalize_volume(wav, -30, increase_only=True)`: scale so the RMS, measured against
/// int16 full scale, reaches the target, but never turn audio down. The LSTM sees power mel energies,
/// not logs, so their absolute level matters and must match what it was trained on.
enum VolumeNormalization {
    /// Digital silence is left as it is (resemblyzer would divide by zero and return NaNs).
    static func raise(_ samples: inout [Float], toDBFS target: Double) {
        guard !samples.isEmpty else { return }
        let int16Max = 32_767.0
        var energy = 0.0
        for sample in samples { energy += Double(sample) * Double(sample) }
        let rms = (energy / Double(samples.count)).squareRoot() * int16Max
        guard rms > 0 else { return }
        let change = target - 20 * log10(rms / int16Max)
        guard change > 0 else { return }
        let gain = Float(pow(10, change / 20))
        for index in samples.indices { samples[index] *= gain }
    }
}
