/// Nearest-rank percentiles, the convention latency reports use: p99 of 100 values is the 99th smallest.
public struct Percentiles: Sendable, Hashable {
    public var count: Int
    public var p50: Double?
    public var p95: Double?
    public var p99: Double?
    public var max: Double?

    public init(_ values: [Double]) {
        let sorted = values.filter(\.isFinite).sorted()
        count = sorted.count
        func rank(_ p: Double) -> Double? {
            guard !sorted.isEmpty else { return nil }
            let index = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        p50 = rank(50)
        p95 = rank(95)
        p99 = rank(99)
        max = sorted.last
    }
}
