extension SmoothedKMeans {
    /// What makes a group of badly explained frames a voice of its own (`splittingOffUncountedVoice`).
    struct UncountedVoiceRule: Sendable, Equatable {
        /// The new cluster keeps at least this much speech after the smoothing...
        var minimumSeconds: Double
        /// ...in at least this many separate turns (runs of the smoothed labels)...
        var minimumTurns: Int
        /// ...and its frames are, on average, at least this much more similar (cosine) to its centre
        /// than to the nearest other centre.
        var minimumMargin: Float
        /// Frames less similar than this to their own cluster's centre are the candidates for a seed;
        /// each value is one search.
        var outlierSimilarities: [Float] = [0.78, 0.80, 0.82, 0.84, 0.86]
        /// A seed is the candidate with the most other candidates at least this similar to it, with
        /// those neighbours; each value is one search.
        var neighbourSimilarities: [Float] = [0.72, 0.75, 0.78]
        /// Fewest frames in a seed.
        var minimumSeedFrames: Int = 4
        /// The neighbour search compares every two candidates; beyond this many, an even stride of them.
        var maximumCandidates: Int = 600

        static let `default` = UncountedVoiceRule(minimumSeconds: 4, minimumTurns: 2, minimumMargin: 0.12)
    }

    /// `labels` with one more cluster, for a voice the count left inside another speaker's cluster; nil
    /// when no group of frames passes `rule`.
    ///
    /// Why: `cluster()` keeps one more speaker only if it pays for itself over the whole session, and
    /// k-means at k + 1 spends its extra centre where the cost falls most, which is splitting a
    /// long-talking voice rather than isolating a brief one. A person who says 4 s in two turns, in a
    /// voice close to another's (synth4-00's fourth voice), is found neither way. Yet their frames stand
    /// out from the cluster they were put in (0.72–0.87 similar to the centre of the voice they were
    /// folded into, whose own frames sit at 0.82 or more in 95 %) and agree with each other. So:
    /// take the frames least like their own centre, find the densest group among them, grow a cluster
    /// from it as an enrolled profile is grown (`splitting(_:around:)`), and keep the result only if it
    /// is a voice that returns: enough speech, in separate turns, clearly nearer its own centre than
    /// any other. Overlapped speech and a drifting voice make groups too, but theirs are brief, in one
    /// run, or as near another centre as their own (ami-dev, docs/accuracy.md).
    ///
    /// `labels` must number clusters 0 ..< k with each used; `seconds` is each frame's length. The new
    /// cluster is numbered k. Of the groups that pass, the one with the largest margin is split off;
    /// one split per call.
    func splittingOffUncountedVoice(_ labels: [Int], seconds: [Double], rule: UncountedVoiceRule = .default) -> [Int]? {
        guard frameCount > 1, labels.count == frameCount, seconds.count == frameCount, let top = labels.max() else { return nil }
        let k = top + 1
        let every = Array(0 ..< frameCount)
        let centroids = means(k, labels: labels, of: every, keeping: [Float](repeating: 0, count: k * dimension))
        let ownSimilarity = (0 ..< frameCount).map { dot($0, centroids, labels[$0]) }
        var tried = Set<[Int]>()
        var best: (labels: [Int], margin: Float)?
        for outlierSimilarity in rule.outlierSimilarities {
            var candidates = (0 ..< frameCount).filter { ownSimilarity[$0] < outlierSimilarity }
            guard candidates.count >= rule.minimumSeedFrames else { continue }
            if candidates.count > rule.maximumCandidates {
                let step = (candidates.count + rule.maximumCandidates - 1) / rule.maximumCandidates
                candidates = Swift.stride(from: 0, to: candidates.count, by: step).map { candidates[$0] }
            }
            let pairSimilarity = similarities(among: candidates)
            let m = candidates.count
            for neighbourSimilarity in rule.neighbourSimilarities {
                var densest = 0, densestCount = -1
                for i in 0 ..< m {
                    let count = (0 ..< m).reduce(0) { $0 + (pairSimilarity[i * m + $1] >= neighbourSimilarity ? 1 : 0) }
                    if count > densestCount { (densest, densestCount) = (i, count) }
                }
                let group = (0 ..< m).filter { pairSimilarity[densest * m + $0] >= neighbourSimilarity }.map { candidates[$0] }
                guard group.count >= rule.minimumSeedFrames, tried.insert(group).inserted else { continue }
                let seed = means(1, labels: [Int](repeating: 0, count: group.count), of: group, keeping: [Float](repeating: 0, count: dimension))
                guard let split = splitting(labels, around: seed), let margin = margin(ofCluster: k, in: split, seconds: seconds, rule: rule) else { continue }
                if best == nil || margin > best!.margin { best = (split, margin) }
            }
        }
        return best?.labels
    }

    /// Cosine similarity of every two of `members` (frame indices), row-major.
    private func similarities(among members: [Int]) -> [Float] {
        let m = members.count
        var result = [Float](repeating: 0, count: m * m)
        for i in 0 ..< m {
            for j in i ..< m {
                // `dot` reads its second argument as rows of `dimension`: the frames themselves here.
                let similarity = dot(members[i], frames, members[j])
                (result[i * m + j], result[j * m + i]) = (similarity, similarity)
            }
        }
        return result
    }

    /// The mean, over `cluster`'s frames, of (similarity to its centre − similarity to the nearest
    /// other centre), if the cluster has `rule`'s speech and turns; nil otherwise.
    func margin(ofCluster cluster: Int, in labels: [Int], seconds: [Double], rule: UncountedVoiceRule) -> Float? {
        let k = (labels.max() ?? 0) + 1
        let speech = zip(labels, seconds).reduce(0.0) { $0 + ($1.0 == cluster ? $1.1 : 0) }
        guard speech >= rule.minimumSeconds, Self.turns(labels, k)[cluster] >= rule.minimumTurns else { return nil }
        let centroids = means(k, labels: labels, of: Array(0 ..< frameCount), keeping: [Float](repeating: 0, count: k * dimension))
        var total: Float = 0, members = 0
        for n in 0 ..< frameCount where labels[n] == cluster {
            var other = -Float.infinity
            for c in 0 ..< k where c != cluster { other = max(other, dot(n, centroids, c)) }
            total += dot(n, centroids, cluster) - other
            members += 1
        }
        let margin = total / Float(max(1, members))
        return margin >= rule.minimumMargin ? margin : nil
    }
}
