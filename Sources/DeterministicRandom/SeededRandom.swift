/// SplitMix64: a tiny, fully specified generator, so a seed gives the same synthetic meeting, the same
/// dither and the same k-means start on every platform and toolchain (the standard library's
/// `random(in:using:)` algorithms are not promised to stay fixed). The one copy for Sources and Tests.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Uniform in the closed range (a degenerate range returns its bound).
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// True with the given probability.
    public mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// Uniform index in 0 ..< count (count > 0).
    public mutating func index(_ count: Int) -> Int { integer(0 ... count - 1) }

    /// Uniform integer in the closed range.
    public mutating func integer(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// A stream derived from this seed for an independent purpose, so adding draws to one purpose does
    /// not shift another's.
    public static func derived(from seed: UInt64, purpose: UInt64) -> SeededRandom {
        var mixer = SeededRandom(seed: seed ^ (purpose &* 0xD6E8_FEB8_6659_FD93))
        return SeededRandom(seed: mixer.next())
    }
}
