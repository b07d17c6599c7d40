/// Thresholds for an embedding model from how far apart its embeddings of the same voice and of
/// different voices lie on labelled audio (`speakersync-bench calibrate`).
///
/// The diarizer's thresholds were tuned for GE2E (docs/accuracy.md); a model whose different voices sit
/// at cosine distance 0.9 (CAM++) needs other numbers with the same meaning. `matched(_:from:)` maps a
/// threshold tuned on a reference model to the distance that sits at the same place among this model's
/// distances on the same audio: the same average of the two distributions' CDFs (the share of same-voice
/// pairs within it and the share of different-voice pairs within it), which is monotone, so the order
/// of thresholds is kept. The equal-error point (as many same-voice pairs beyond it as different-voice
/// pairs within) is reported, not used: sherpa-onnx's offline clustering compares whole-segment
/// embeddings, and set there it split voices (docs/accuracy.md); that threshold keeps sherpa-onnx's
/// default unless the operator sweeps it with `speakersync eval` on data of their own.
public struct EmbeddingCalibration: Sendable, Equatable {
    public var samePairs: Int
    public var differentPairs: Int
    public var sameMedian: Double
    public var differentMedian: Double
    /// Equal error rate, 0...1, and the distance where it holds.
    public var equalErrorRate: Double
    public var equalErrorDistance: Double
    /// The distance within which 1 % of different-voice pairs fall.
    public var onePercentFalseAcceptDistance: Double

    /// The distances, sorted.
    public var same: [Double]
    public var different: [Double]

    /// The share of pairs (half same-voice, half different-voice) within `distance`.
    public func position(of distance: Double) -> Double {
        0.5 * Self.fraction(same, atOrBelow: distance) + 0.5 * Self.fraction(different, atOrBelow: distance)
    }

    /// The distance at `position` (0...1): the inverse of `position(of:)`, by bisection.
    public func distance(at position: Double) -> Double {
        var low = 0.0, high = 2.0
        for _ in 0 ..< 50 {
            let middle = (low + high) / 2
            if self.position(of: middle) < position { low = middle } else { high = middle }
        }
        return high
    }

    /// A threshold tuned on `reference`'s embeddings, carried over to this model's.
    public func matched(_ threshold: Double, from reference: EmbeddingCalibration) -> Double {
        distance(at: reference.position(of: threshold))
    }

    /// The thresholds by the names the provider config takes, carried over from `tuned` (the names and
    /// values tuned on `reference`).
    public func thresholds(matching tuned: [String: Double], of reference: EmbeddingCalibration) -> [String: Double] {
        func rounded(_ value: Double) -> Double { (min(1.99, max(0.01, value)) * 1000).rounded() / 1000 }
        return tuned.mapValues { rounded(matched($0, from: reference)) }
    }

    static func fraction(_ sorted: [Double], atOrBelow value: Double) -> Double {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return Double(low) / Double(sorted.count)
    }

    /// nil when either kind of pair is missing (a set with one voice per file tells nothing).
    public init?(sameDistances: [Double], differentDistances: [Double]) {
        guard !sameDistances.isEmpty, !differentDistances.isEmpty else { return nil }
        let same = sameDistances.sorted()
        let different = differentDistances.sorted()
        self.same = same
        self.different = different
        samePairs = same.count
        differentPairs = different.count
        sameMedian = Self.quantile(same, 0.5)
        differentMedian = Self.quantile(different, 0.5)
        onePercentFalseAcceptDistance = Self.quantile(different, 0.01)
        // Sweep every observed distance as a threshold t: misses = same pairs above t, false accepts =
        // different pairs at or below t; both are step functions, so the crossing is among the samples.
        var best = (gap: Double.infinity, rate: 1.0, distance: 0.0)
        var sameIndex = 0, differentIndex = 0
        for t in (same + different).sorted() {
            while sameIndex < same.count, same[sameIndex] <= t { sameIndex += 1 }
            while differentIndex < different.count, different[differentIndex] <= t { differentIndex += 1 }
            let miss = Double(same.count - sameIndex) / Double(same.count)
            let falseAccept = Double(differentIndex) / Double(different.count)
            if abs(miss - falseAccept) < best.gap {
                best = (abs(miss - falseAccept), (miss + falseAccept) / 2, t)
            }
        }
        equalErrorRate = best.rate
        equalErrorDistance = best.distance
    }

    /// Linear interpolation between order statistics of sorted values.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        guard sorted.count > 1 else { return sorted[0] }
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(sorted.count - 1, lower + 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    /// 1 - cosine similarity.
    public static func cosineDistance(_ a: [Float], _ b: [Float]) -> Double {
        var dot = 0.0, na = 0.0, nb = 0.0
        for i in 0 ..< min(a.count, b.count) {
            dot += Double(a[i]) * Double(b[i])
            na += Double(a[i]) * Double(a[i])
            nb += Double(b[i]) * Double(b[i])
        }
        guard na > 0, nb > 0 else { return 1 }
        return 1 - dot / (na.squareRoot() * nb.squareRoot())
    }
}
