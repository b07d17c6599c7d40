/// Thresholds for an embedding model from how far apart its embeddings of the same voice and of
/// different voices lie on labelled audio (`speakersync-bench calibrate`). Each threshold is read off
/// the model's own distance distributions at an operating point chosen for what the threshold does, so
/// a model whose different voices sit at cosine distance 0.9 (CAM++) and one whose sit at 0.08 (GE2E)
/// get thresholds with the same meaning:
///
/// - `speaker`, `cluster`, `offline` (a frame starts a new speaker; clusters merge): the equal-error
///   point, where as many same-voice pairs are farther apart as different-voice pairs are closer.
/// - `embedding` (a frame also updates its speaker's profile): the median same-voice distance, so only
///   typical frames of a voice move its profile.
/// - `enrolled` (a whole speaker keeps an enrolled person's name): the distance that 1 % of
///   different-voice pairs fall within; centroids of a session's frames are closer to their voice than
///   single frames, so this is strict on strangers without missing people.
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

    /// The thresholds by the names the provider config takes.
    public var thresholds: [String: Double] {
        func rounded(_ value: Double) -> Double { (min(1.99, max(0.01, value)) * 1000).rounded() / 1000 }
        return [
            "speaker": rounded(equalErrorDistance), "cluster": rounded(equalErrorDistance), "offline": rounded(equalErrorDistance),
            "embedding": rounded(sameMedian), "enrolled": rounded(onePercentFalseAcceptDistance),
        ]
    }

    /// nil when either kind of pair is missing (a set with one voice per file tells nothing).
    public init?(sameDistances: [Double], differentDistances: [Double]) {
        guard !sameDistances.isEmpty, !differentDistances.isEmpty else { return nil }
        let same = sameDistances.sorted()
        let different = differentDistances.sorted()
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
