extension SmoothedKMeans {
    /// `labels` with one more cluster grown from `seed`, then smoothed like every clustering here. The
    /// seed is a voice known from outside the session (an enrolled person's profile), or the centre of
    /// a group of frames the count folded into another voice (`splittingOffUncountedVoice`).
    ///
    /// Why: `cluster()` counts from what the session shows, and a person who says only a few seconds,
    /// in a voice close to someone else's, does not pay for an extra speaker there (synth4-00's fourth
    /// voice: 4 s in two turns, 0.89 cosine from the voice it was folded into). A profile is evidence
    /// the session does not hold. The split starts from the existing clusters' centres plus the seed and
    /// runs spherical k-means on every frame, so the new centre can move onto that voice as heard today;
    /// the caller decides whether the result is still that person.
    ///
    /// `labels` must number clusters 0 ..< k with each used. The result numbers the new cluster k. nil
    /// when no frame is nearer the seed than to every existing centre, or when after the smoothing the
    /// new cluster or any existing one has no frame left (the seed took a whole speaker's place rather
    /// than splitting one).
    func splitting(_ labels: [Int], around seed: [Float], iterations: Int = 10) -> [Int]? {
        guard frameCount > 1, seed.count == dimension, labels.count == frameCount, let top = labels.max() else { return nil }
        let k = top + 1
        let every = Array(0 ..< frameCount)
        var centroids = means(k, labels: labels, of: every, keeping: [Float](repeating: 0, count: k * dimension)) + unitLength(seed)
        var nearestLabels = [Int](repeating: -1, count: frameCount)
        for _ in 0 ..< max(1, iterations) {
            var changed = false
            for n in 0 ..< frameCount {
                let cluster = nearest(n, centroids, k + 1).cluster
                if cluster != nearestLabels[n] { nearestLabels[n] = cluster; changed = true }
            }
            guard nearestLabels.contains(k) else { return nil }
            guard changed else { break }
            centroids = means(k + 1, labels: nearestLabels, of: every, keeping: centroids)
        }
        let smoothed = viterbi(centroids).labels
        var used = [Bool](repeating: false, count: k + 1)
        for label in smoothed { used[label] = true }
        return used.allSatisfy { $0 } ? smoothed : nil
    }
}
