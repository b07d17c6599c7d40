/// Parameters of `StreamingResampler`'s windowed-sinc low-pass filter.
public struct ResamplerConfig: Sendable, Equatable {
    /// Rate the resampler produces. SpeakerSync providers all take 16 kHz.
    public var outputRate: Int
    /// Input rates accepted; outside them `StreamingResampler.init` throws `invalid_argument`.
    public var supportedInputRates: ClosedRange<Int>
    /// Filter half-length, in zero crossings of the sinc. More = steeper transition, more work.
    public var zeroCrossings: Int
    /// −6 dB cutoff as a fraction of the lower of the two Nyquist frequencies. Below 1 so that the
    /// transition band ends near Nyquist and little energy aliases back into the speech band.
    public var cutoffRatio: Double
    /// Kaiser window shape; 8.6 gives roughly 80–90 dB stop-band attenuation.
    public var kaiserBeta: Double

    public init(outputRate: Int = 16_000, supportedInputRates: ClosedRange<Int> = 8_000 ... 48_000,
                zeroCrossings: Int = 16, cutoffRatio: Double = 0.9, kaiserBeta: Double = 8.6) {
        self.outputRate = outputRate
        self.supportedInputRates = supportedInputRates
        self.zeroCrossings = zeroCrossings
        self.cutoffRatio = cutoffRatio
        self.kaiserBeta = kaiserBeta
    }

    public static let `default` = ResamplerConfig()
}
