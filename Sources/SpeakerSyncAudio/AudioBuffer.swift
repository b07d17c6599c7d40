/// Mono audio as normalised floats (nominally -1...1) with the rate they were sampled at.
///
/// Everything downstream of decoding (resampler, providers, synthesis) works on this one shape, so
/// channel layout and sample encoding are dealt with exactly once, at the edge.
public struct AudioBuffer: Sendable, Equatable {
    public var samples: [Float]
    public var sampleRate: Int

    public init(samples: [Float], sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// Duration implied by the sample count.
    public var durationSeconds: Double {
        sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0
    }
}
