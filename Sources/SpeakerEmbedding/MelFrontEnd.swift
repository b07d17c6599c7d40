import Foundation

/// resemblyzer's `wav_to_mel_spectrogram`: librosa.feature.melspectrogram at 16 kHz with n_fft 400
/// (25 ms), hop 160 (10 ms), a periodic Hann window, power 2, 40 Slaney mel bands, and center=True
/// framing: frame t is centred on sample 160·t and the signal is reflect-padded by 200 samples at
/// both ends. (librosa ≥ 0.10 pads with zeros by default instead; the weights were trained in 2019
/// with librosa's then-default reflect padding. Only the two frames at each end differ.)
struct MelFrontEnd: Sendable {
    static let sampleRate = 16_000
    static let fftLength = 400
    static let hopLength = 160

    private let window: [Float]
    private let spectrum = RealPowerSpectrum(frameLength: fftLength)
    private let filterbank = MelFilterbank(sampleRate: sampleRate, fftLength: fftLength, channelCount: MelSpectrogram.channelCount)

    init() {
        // scipy.signal.get_window("hann", 400, fftbins=True): the periodic window librosa uses.
        window = (0 ..< Self.fftLength).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(Self.fftLength))) }
    }

    /// librosa's frame count for `sampleCount` samples with center=True.
    static func centeredFrameCount(sampleCount: Int) -> Int { 1 + sampleCount / hopLength }

    /// The first `frameCount` frames of `samples`' mel spectrogram (at most `centeredFrameCount`).
    /// `samples` must not be empty.
    func spectrogram(of samples: UnsafeBufferPointer<Float>, frameCount: Int) -> MelSpectrogram {
        precondition(!samples.isEmpty && frameCount <= Self.centeredFrameCount(sampleCount: samples.count))
        let bins = spectrum.binCount, half = Self.fftLength / 2, count = samples.count
        var power = [Float](repeating: 0, count: frameCount * bins)
        var mel = [Float](repeating: 0, count: frameCount * MelSpectrogram.channelCount)
        var frame = [Float](repeating: 0, count: Self.fftLength)
        var scratch = [Float](repeating: 0, count: spectrum.scratchCount)
        window.withUnsafeBufferPointer { window in
            frame.withUnsafeMutableBufferPointer { frame in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    power.withUnsafeMutableBufferPointer { power in
                        for t in 0 ..< frameCount {
                            let first = t * Self.hopLength - half
                            if first >= 0, first + Self.fftLength <= count {
                                for n in 0 ..< Self.fftLength { frame[n] = samples[first + n] * window[n] }
                            } else {
                                for n in 0 ..< Self.fftLength {
                                    frame[n] = samples[Self.reflected(first + n, count: count)] * window[n]
                                }
                            }
                            spectrum.power(of: frame.baseAddress!, into: power.baseAddress! + t * bins, scratch: scratch.baseAddress!)
                        }
                    }
                }
            }
        }
        if frameCount > 0 {
            power.withUnsafeBufferPointer { power in
                filterbank.weights.withUnsafeBufferPointer { weights in
                    mel.withUnsafeMutableBufferPointer { mel in
                        BLAS.multiply(
                            power.baseAddress!, rows: frameCount, inner: bins, leadingA: bins,
                            weights.baseAddress!, columns: MelSpectrogram.channelCount, leadingB: MelSpectrogram.channelCount,
                            into: mel.baseAddress!, leadingC: MelSpectrogram.channelCount, beta: 0)
                    }
                }
            }
        }
        return MelSpectrogram(frameCount: frameCount, values: mel)
    }

    /// numpy.pad(mode="reflect") index: mirror about the first and last sample (not repeating them),
    /// as often as needed for signals shorter than the padding.
    static func reflected(_ index: Int, count: Int) -> Int {
        guard count > 1 else { return 0 }
        let period = 2 * (count - 1)
        var position = index % period
        if position < 0 { position += period }
        return position < count ? position : period - position
    }
}
