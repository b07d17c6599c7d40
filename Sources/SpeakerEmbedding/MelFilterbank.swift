import Foundation

/// librosa.filters.mel(sr, n_fft, n_mels) with its defaults (fmin 0, fmax sr/2, Slaney's mel scale,
/// Slaney area normalisation): triangles on the mel scale, each scaled to unit area in Hz. The
/// encoder's weights were trained on exactly these filters, so they are reproduced, not approximated.
struct MelFilterbank: Sendable {
    let channelCount: Int
    let binCount: Int
    /// [bin × channel], row-major: the right operand of power[frames × bins] · weights.
    let weights: [Float]

    init(sampleRate: Int, fftLength: Int, channelCount: Int) {
        let binCount = fftLength / 2 + 1
        self.channelCount = channelCount
        self.binCount = binCount
        let nyquist = Double(sampleRate) / 2
        let binFrequencies = (0 ..< binCount).map { Double($0) * nyquist / Double(binCount - 1) }
        let lowestMel = Self.mel(hertz: 0), highestMel = Self.mel(hertz: nyquist)
        let edges = (0 ..< channelCount + 2).map {
            Self.hertz(mel: lowestMel + (highestMel - lowestMel) * Double($0) / Double(channelCount + 1))
        }
        var weights = [Float](repeating: 0, count: channelCount * binCount)
        for channel in 0 ..< channelCount {
            let lower = edges[channel], center = edges[channel + 1], upper = edges[channel + 2]
            let areaNormalisation = 2 / (upper - lower)
            for bin in 0 ..< binCount {
                let rising = (binFrequencies[bin] - lower) / (center - lower)
                let falling = (upper - binFrequencies[bin]) / (upper - center)
                weights[bin * channelCount + channel] = Float(max(0, min(rising, falling)) * areaNormalisation)
            }
        }
        self.weights = weights
    }

    // Slaney's scale: linear (200/3 Hz per mel) below 1 kHz, logarithmic (27 mels per factor 6.4) above.
    private static let hertzPerMel = 200.0 / 3
    private static let logRegionHertz = 1000.0
    private static let logRegionMel = logRegionHertz / hertzPerMel
    private static let logStep = log(6.4) / 27

    static func mel(hertz: Double) -> Double {
        hertz >= logRegionHertz ? logRegionMel + log(hertz / logRegionHertz) / logStep : hertz / hertzPerMel
    }

    static func hertz(mel: Double) -> Double {
        mel >= logRegionMel ? logRegionHertz * exp(logStep * (mel - logRegionMel)) : mel * hertzPerMel
    }
}
