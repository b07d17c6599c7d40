/// The recent audio of a stream, addressed by absolute sample index, so windows can be cut from it
/// after the VAD has decided where speech is. Older audio is dropped: memory stays bounded however
/// long the session runs.
struct AudioHistory: Sendable {
    private(set) var samples: [Float] = []
    /// Absolute index of `samples[0]`.
    private(set) var firstSample = 0
    let capacitySamples: Int

    init(capacitySamples: Int) {
        self.capacitySamples = capacitySamples
        samples.reserveCapacity(capacitySamples + capacitySamples / 2)
    }

    var endSample: Int { firstSample + samples.count }

    mutating func append(_ new: [Float]) {
        samples.append(contentsOf: new)
        let excess = samples.count - capacitySamples
        // Drop in large steps so the copy cost is amortised.
        if excess > capacitySamples / 2 {
            samples.removeFirst(excess)
            firstSample += excess
        }
    }

    /// Samples in [start, end), clipped to what is still held.
    func slice(_ start: Int, _ end: Int) -> [Float] {
        let lower = max(start, firstSample) - firstSample
        let upper = min(end, endSample) - firstSample
        guard upper > lower else { return [] }
        return Array(samples[lower ..< upper])
    }
}
