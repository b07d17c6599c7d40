import DeterministicRandom
import SpeakerSyncAudio

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

    /// Audio read `factor` times as fast: a factor above 1 gives a shorter, higher word. The word is
    /// taken as sampled at `sampleRate` × `factor` Hz and converted back to `sampleRate` by the
    /// project's polyphase resampler, so nothing folds back into the speech band (linear
    /// interpolation, used before, mirrors images near Nyquist). The rate is whole hertz, so the factor
    /// is kept to 1/`sampleRate`: a 16 kHz word moves by under 1/32000 of its length.
    public static func resample(_ audio: [Float], factor: Double, sampleRate: Int) throws -> [Float] {
        guard var resampler = try resampler(factor: factor, sampleRate: sampleRate) else { return audio }
        return resample(audio, with: &resampler)
    }

    /// The resampler `resample(_:factor:sampleRate:)` uses for `factor`, or nil where the audio stays as
    /// it is (a factor that is not finite, not positive, or rounds to `sampleRate` itself). Why apart:
    /// designing the filter is most of the cost (a rate prime to 16000 has 16000 phases), and every word
    /// of a turn shares one factor, so a caller that keeps the resampler per rate designs it once.
    public static func resampler(factor: Double, sampleRate: Int) throws -> StreamingResampler? {
        guard let inputRate = inputRate(factor: factor, sampleRate: sampleRate) else { return nil }
        let config = ResamplerConfig(outputRate: sampleRate, supportedInputRates: 1 ... Int.max)
        return try StreamingResampler(inputRate: inputRate, config: config)
    }

    /// The whole-hertz rate a word is taken as sampled at for `factor` (the key a caller keeps its
    /// resamplers by), or nil where the audio stays as it is.
    public static func inputRate(factor: Double, sampleRate: Int) -> Int? {
        guard factor.isFinite, factor > 0 else { return nil }
        let inputRate = Int((Double(sampleRate) * factor).rounded())
        return inputRate > 0 && inputRate != sampleRate ? inputRate : nil
    }

    /// One word through `resampler`, as a stream of its own: the same samples as a new resampler gives.
    public static func resample(_ audio: [Float], with resampler: inout StreamingResampler) -> [Float] {
        guard audio.count > 1 else { return audio }
        resampler.reset()
        return resampler.process(audio) + resampler.flush()
    }
}
