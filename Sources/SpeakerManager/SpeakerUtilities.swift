/// Embedding arithmetic shared by the manager and usable without one (FluidAudio's `SpeakerUtilities`).
///
/// Sums run in `Double`: 256-term dot products in `Float` drift by a few ulps depending on order, and
/// the threshold comparisons should not depend on that.
public enum SpeakerUtilities {
    /// 1 − cosine similarity: 0 for the same direction, 1 for orthogonal, 2 for opposite. Scale does not
    /// matter. `.infinity` (never a match) when the lengths differ, a vector is empty, all zeros or not finite.
    public static func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var dot = 0.0
        var squaresA = 0.0
        var squaresB = 0.0
        for index in a.indices {
            let x = Double(a[index])
            let y = Double(b[index])
            dot += x * y
            squaresA += x * x
            squaresB += y * y
        }
        guard squaresA > 0, squaresB > 0, dot.isFinite, squaresA.isFinite, squaresB.isFinite else { return .infinity }
        let similarity = min(max(dot / (squaresA.squareRoot() * squaresB.squareRoot()), -1), 1)
        return Float(1 - similarity)
    }

    /// Throws unless `embedding` has `dimension` finite components, not all zero.
    public static func validateEmbedding(_ embedding: [Float], dimension: Int) throws(SpeakerManagerError) {
        _ = try squaredNorm(of: embedding, dimension: dimension)
    }

    /// The unit-length copy of a valid embedding; throws as `validateEmbedding` does.
    public static func normalizedEmbedding(_ embedding: [Float], dimension: Int) throws(SpeakerManagerError) -> [Float] {
        let squares = try squaredNorm(of: embedding, dimension: dimension)
        return scaled(embedding.map(Double.init), by: 1 / squares.squareRoot())
    }

    /// The unit-length mean direction; nil for no embeddings, mixed lengths, or a mean of zero
    /// (embeddings that cancel out have no common direction).
    public static func averageEmbeddings(_ embeddings: [[Float]]) -> [Float]? {
        guard let dimension = embeddings.first?.count, dimension > 0,
            embeddings.allSatisfy({ $0.count == dimension })
        else { return nil }
        var sum = [Double](repeating: 0, count: dimension)
        for embedding in embeddings {
            for index in 0..<dimension { sum[index] += Double(embedding[index]) }
        }
        return unitVector(sum)
    }

    /// Exponential moving average `normalize(alpha · current + (1 − alpha) · new)` of two unit vectors;
    /// `alpha` is the weight kept by the current profile. Nil for mismatched lengths or a zero result.
    public static func updateEmbedding(current: [Float], new: [Float], alpha: Float) -> [Float]? {
        guard current.count == new.count, !current.isEmpty else { return nil }
        let keep = Double(alpha)
        let take = 1 - keep
        var mixed = [Double](repeating: 0, count: current.count)
        for index in current.indices {
            mixed[index] = keep * Double(current[index]) + take * Double(new[index])
        }
        return unitVector(mixed)
    }

    /// The candidate nearest to `embedding`; equal distances go to the id first in `SpeakerIDOrder`
    /// (numeric ids by value), so the answer does
    /// not depend on dictionary order. Nil when there is no candidate with a finite distance.
    public static func findClosestSpeaker(embedding: [Float], candidates: some Sequence<Speaker>) -> SpeakerMatch? {
        var best: SpeakerMatch?
        for candidate in candidates {
            let distance = cosineDistance(embedding, candidate.currentEmbedding)
            guard distance.isFinite else { continue }
            if let current = best,
                current.distance < distance
                    || (current.distance == distance && !SpeakerIDOrder.areInIncreasingOrder(candidate.id, current.id))
            {
                continue
            }
            best = SpeakerMatch(id: candidate.id, distance: distance)
        }
        return best
    }

    // MARK: - Internals

    static func squaredNorm(of embedding: [Float], dimension: Int) throws(SpeakerManagerError) -> Double {
        guard embedding.count == dimension else {
            throw SpeakerManagerError(
                .dimensionMismatch, "embedding has \(embedding.count) values, expected \(dimension)")
        }
        var squares = 0.0
        for (index, value) in embedding.enumerated() {
            guard value.isFinite else {
                throw SpeakerManagerError(.nonFiniteEmbedding, "embedding value \(index) is \(value)")
            }
            squares += Double(value) * Double(value)
        }
        guard squares > 0 else {
            throw SpeakerManagerError(.zeroNormEmbedding, "embedding is all zeros; it has no direction")
        }
        return squares
    }

    static func unitVector(_ values: [Double]) -> [Float]? {
        let squares = values.reduce(0) { $0 + $1 * $1 }
        guard squares > 0, squares.isFinite else { return nil }
        return scaled(values, by: 1 / squares.squareRoot())
    }

    private static func scaled(_ values: [Double], by factor: Double) -> [Float] {
        values.map { Float($0 * factor) }
    }
}
