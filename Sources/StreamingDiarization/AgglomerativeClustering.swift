import SpeakerManager

/// Average-linkage agglomerative clustering on cosine distance, for the offline pass at finalize.
///
/// Items carry weights (seconds of speech), so a cluster's distance to another is the
/// weight-averaged distance between their members (UPGMA with weights, via Lance–Williams). Each
/// row keeps its nearest neighbour, so a merge costs O(n) plus the rows that pointed at the merged
/// pair: close to O(n²) overall instead of O(n³).
enum AgglomerativeClustering {
    /// Cluster index per item. Merges while the closest pair is nearer than `threshold`, and also
    /// beyond it while there are more than `maxClusters`; stops at `minClusters`.
    static func cluster(_ embeddings: [[Float]], weights: [Double], threshold: Float,
                        minClusters: Int = 1, maxClusters: Int? = nil) -> [Int] {
        let n = embeddings.count
        guard n > 1 else { return Array(repeating: 0, count: n) }
        var distance = [Float](repeating: 0, count: n * n)
        for i in 0 ..< n {
            for j in i + 1 ..< n {
                let d = SpeakerUtilities.cosineDistance(embeddings[i], embeddings[j])
                distance[i * n + j] = d
                distance[j * n + i] = d
            }
        }
        var active = [Bool](repeating: true, count: n)
        var weight = weights
        var members = (0 ..< n).map { [$0] }
        var nearest = [Int](repeating: -1, count: n)
        var nearestDistance = [Float](repeating: .infinity, count: n)
        func refresh(_ i: Int) {
            nearest[i] = -1
            nearestDistance[i] = .infinity
            for j in 0 ..< n where j != i && active[j] && distance[i * n + j] < nearestDistance[i] {
                nearestDistance[i] = distance[i * n + j]
                nearest[i] = j
            }
        }
        for i in 0 ..< n { refresh(i) }
        var clusters = n
        let lower = max(1, minClusters)
        while clusters > lower {
            var best = -1
            for i in 0 ..< n where active[i] && nearest[i] >= 0 && (best < 0 || nearestDistance[i] < nearestDistance[best]) { best = i }
            guard best >= 0 else { break }
            let d = nearestDistance[best]
            if d >= threshold, maxClusters.map({ clusters <= $0 }) ?? true { break }
            let (a, b) = (best, nearest[best])
            // Merge b into a.
            let wa = weight[a], wb = weight[b]
            for k in 0 ..< n where active[k] && k != a && k != b {
                let merged = Float((wa * Double(distance[a * n + k]) + wb * Double(distance[b * n + k])) / (wa + wb))
                distance[a * n + k] = merged
                distance[k * n + a] = merged
            }
            active[b] = false
            weight[a] = wa + wb
            members[a] += members[b]
            members[b] = []
            clusters -= 1
            for k in 0 ..< n where active[k] {
                if k == a || nearest[k] == a || nearest[k] == b {
                    refresh(k)
                } else if distance[k * n + a] < nearestDistance[k] {
                    nearestDistance[k] = distance[k * n + a]
                    nearest[k] = a
                }
            }
        }
        var labels = [Int](repeating: 0, count: n)
        for (label, root) in (0 ..< n).filter({ active[$0] }).enumerated() {
            for item in members[root] { labels[item] = label }
        }
        return labels
    }

    /// The normalised weighted mean of `vectors`.
    static func centroid(_ vectors: [[Float]], weights: [Double]) -> [Float] {
        guard let dimension = vectors.first?.count else { return [] }
        var sum = [Float](repeating: 0, count: dimension)
        for (vector, weight) in zip(vectors, weights) {
            for i in 0 ..< dimension { sum[i] += vector[i] * Float(weight) }
        }
        return unitLength(sum)
    }
}
