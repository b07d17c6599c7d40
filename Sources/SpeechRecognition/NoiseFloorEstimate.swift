/// A running percentile of frame levels (dB) over the last `windowFrames` frames, from a histogram of
/// 0.1 dB bins: adding a frame and reading the percentile cost a fixed amount whatever the window, and
/// the answer is within half a bin (0.05 dB) of the exact order statistic the batch segmenter sorts for.
struct NoiseFloorEstimate {
    static let lowestDecibels = -100.0
    static let highestDecibels = 20.0
    static let binDecibels = 0.1

    let windowFrames: Int
    private var bins: [Int]
    /// Bin of each frame in the window, oldest first (a ring buffer once full).
    private var recent: [Int] = []
    private var oldest = 0

    init(windowFrames: Int) {
        self.windowFrames = max(1, windowFrames)
        bins = Array(repeating: 0, count: Int(((Self.highestDecibels - Self.lowestDecibels) / Self.binDecibels).rounded()) + 1)
    }

    var count: Int { recent.count }

    mutating func add(_ level: Double) {
        let bin = min(bins.count - 1, max(0, Int(((level - Self.lowestDecibels) / Self.binDecibels).rounded())))
        bins[bin] += 1
        if recent.count < windowFrames {
            recent.append(bin)
        } else {
            bins[recent[oldest]] -= 1
            recent[oldest] = bin
            oldest = (oldest + 1) % windowFrames
        }
    }

    /// The level at rank `count × fraction` (0-based, as `sorted[count / 10]` for 0.1).
    func percentile(_ fraction: Double) -> Double {
        guard !recent.isEmpty else { return Self.lowestDecibels }
        let rank = min(recent.count - 1, Int(Double(recent.count) * fraction))
        var seen = 0
        for (bin, frames) in bins.enumerated() {
            seen += frames
            if seen > rank { return Self.lowestDecibels + Double(bin) * Self.binDecibels }
        }
        return Self.highestDecibels
    }
}
