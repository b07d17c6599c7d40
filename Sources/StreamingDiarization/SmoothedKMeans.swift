import DeterministicRandom
/// Offline speaker clustering for finalize: spherical k-means whose labels are smoothed in time by a
/// Viterbi pass that charges for every change of speaker, with the speaker count chosen where one
/// more speaker stops paying for itself.
///
/// Why not a distance threshold: GE2E frames of two similar voices sit about 0.08 apart in cosine
/// distance, no further than one voice's frames sit from their own centre, so average linkage with
/// any single threshold either merges those people or splits everyone. Time separates them: a real
/// extra speaker explains whole stretches of speech, so the smoothed labels keep it and the cost
/// drops; a split of one voice by what is being said flips from frame to frame, the smoothing
/// removes it and the cost does not drop.
///
/// Voices closer still (two synthetic voices of one synthesiser, two similar real voices) lower the
/// cost by only 2–5 %, less than a real voice that drifts once in a long monologue (7 %), so the gain
/// alone cannot count them. What tells people apart is that they take turns: a speaker is also kept
/// when every cluster returns in separate turns and the clusters are coherent in time — frames far
/// enough apart that their windows do not overlap stay in one cluster far more often than chance
/// (`coherence`). A monologue's drift forms one run per cluster and fails the first condition; a
/// split by content fails the second.
///
/// Deterministic: k-means++ seeding uses a fixed-seed generator, so a session always re-clusters
/// the same way.
struct SmoothedKMeans {
    struct Config: Sendable, Equatable {
        /// Cost of one change of speaker between consecutive frames, in units of cosine distance.
        var switchPenalty: Float
        /// One more speaker is kept if it lowers the smoothed cost by at least this fraction...
        var minimumGain: Float
        /// ...or if every cluster speaks in at least `minimumTurns` separate turns and every pair of
        /// clusters is coherent in time by at least this many standard deviations (`coherence`); 0 turns
        /// this second way off.
        var minimumCoherence: Float = 0
        /// Frames between the two frames of a coherence pair: enough that their embedding windows do
        /// not overlap, so one stretch of sound cannot make them agree.
        var coherenceLag: Int = 3
        /// Separate turns (runs of the smoothed labels) every cluster needs for the second way.
        var minimumTurns: Int = 2
        /// Which pairs of clusters must also alternate, each returning `minimumTurns` times with the
        /// other in between (`PairwiseTurns` says why, and why it is off).
        var pairwiseTurns: PairwiseTurns = .off
        /// Most speakers tried when the session gives no upper bound.
        var maxSpeakers: Int = 8
        var restarts: Int = 8
        /// k-means costs closer than this fraction of the best are one cost (`fit`): 100 times the
        /// difference the CPU's float kernels made on sample.wav (5·10⁻⁷), far below the gaps between
        /// genuinely different fits there (4·10⁻⁴ and more).
        var restartTieTolerance: Double = 1e-4
        var iterations: Int = 30
        /// k-means is fitted on at most this many frames (an even stride through the session), so a
        /// long meeting costs no more than this at finalize; every frame is then labelled.
        var maxFittingFrames: Int = 2000
        var seed: UInt64 = 0x5EED_5EED

        /// The diarizer's defaults (`DiarizerConfig.switchPenalty`, `.minimumCountGain`): one place sets them.
        static let `default` = Config(switchPenalty: DiarizerConfig.default.switchPenalty, minimumGain: DiarizerConfig.default.minimumCountGain,
                                      minimumCoherence: DiarizerConfig.default.minimumCountCoherence)
    }

    struct Result: Equatable {
        /// Cluster per frame, numbered 0 ..< count in order of first appearance.
        var labels: [Int]
        var count: Int
        /// Smoothed cost at each tried count (index 0 is one speaker).
        var costs: [Float]
    }

    let config: Config
    let dimension: Int
    let frames: [Float]
    let frameCount: Int
    /// Per frame: its stretch of speech and its position in it (frames `lag` apart in one stretch
    /// are compared by the coherence test); nil when unknown (every frame then is one stretch).
    private let positions: [FramePosition]?

    struct FramePosition: Equatable {
        var stretch: Int
        var index: Int
    }

    /// `embeddings` in time order; they are scaled to unit length (distances are cosine).
    init(_ embeddings: [[Float]], positions: [FramePosition]? = nil, config: Config = .default) {
        self.config = config
        self.positions = positions
        dimension = embeddings.first?.count ?? 0
        frameCount = embeddings.count
        frames = embeddings.flatMap(unitLength)
    }

    /// Clusters with `minClusters ... maxClusters` speakers (an exact hint gives both).
    func cluster(minClusters: Int = 1, maxClusters: Int? = nil) -> Result {
        guard frameCount > 1, dimension > 0 else { return Result(labels: Array(repeating: 0, count: frameCount), count: min(frameCount, 1), costs: []) }
        let lower = max(1, min(minClusters, frameCount))
        let upper = max(lower, min(maxClusters ?? config.maxSpeakers, frameCount))
        var costs: [Float] = []
        var best: (labels: [Int], cost: Float)?
        for k in 1 ... upper {
            let centroids = fit(k)
            let smoothed = viterbi(centroids)
            costs.append(smoothed.cost)
            if k < lower {
                continue
            } else if k == lower {
                best = smoothed
            } else if let current = best, smoothed.cost < current.cost * (1 - config.minimumGain) || recurs(smoothed.labels, centroids, k) {
                best = smoothed
            } else {
                break
            }
        }
        let labels = Self.renumbered(best!.labels)
        return Result(labels: labels, count: (labels.max() ?? -1) + 1, costs: costs)
    }

    // MARK: k-means

    func dot(_ a: Int, _ centroids: [Float], _ c: Int) -> Float {
        var sum: Float = 0
        frames.withUnsafeBufferPointer { f in
            centroids.withUnsafeBufferPointer { m in
                let x = f.baseAddress! + a * dimension
                let y = m.baseAddress! + c * dimension
                for i in 0 ..< dimension { sum += x[i] * y[i] }
            }
        }
        return sum
    }

    /// The centre most similar to a frame (the first of equals).
    func nearest(_ frame: Int, _ centroids: [Float], _ k: Int) -> (cluster: Int, similarity: Float) {
        var cluster = 0
        var similarity = -Float.infinity
        for c in 0 ..< k {
            let s = dot(frame, centroids, c)
            if s > similarity { similarity = s; cluster = c }
        }
        return (cluster, similarity)
    }

    /// Spherical k-means (k-means++ seeding, best of `restarts`) on a stride of the frames.
    ///
    /// Restarts whose k-means cost is within `restartTieTolerance` of the best are ties, and the tie
    /// goes to the one the smoothing fits best (lowest Viterbi cost; the earlier restart of equals).
    /// Why: two restarts can reach different partitions at costs that differ in the last bits. On
    /// sample.wav two 2-speaker fits cost 6.508460 and 6.508462, one separating the two people, one not;
    /// which came out lower depended on the CPU's BLAS kernel (OpenBLAS Haswell against SkylakeX), and
    /// with it the final speaker count and DER (48.6 against 10.0 %). Float rounding must not decide.
    private func fit(_ k: Int) -> [Float] {
        let stride = max(1, (frameCount + config.maxFittingFrames - 1) / config.maxFittingFrames)
        let sample = Array(Swift.stride(from: 0, to: frameCount, by: stride))
        var generator = SeededRandom(seed: config.seed &+ UInt64(k))
        var fits: [(cost: Double, centroids: [Float])] = []
        for _ in 0 ..< max(1, config.restarts) {
            var centroids = seed(k, sample, &generator)
            var labels = [Int](repeating: -1, count: sample.count)
            var cost = 0.0
            for _ in 0 ..< config.iterations {
                cost = 0
                var changed = false
                for (n, frame) in sample.enumerated() {
                    let (cluster, similarity) = nearest(frame, centroids, k)
                    cost += Double(1 - similarity)
                    if labels[n] != cluster { labels[n] = cluster; changed = true }
                }
                guard changed else { break }
                centroids = means(k, labels: labels, of: sample, keeping: centroids)
            }
            fits.append((cost, centroids))
        }
        let lowest = fits.map(\.cost).min()!
        let tied = fits.filter { $0.cost <= lowest + config.restartTieTolerance * max(lowest, 1) }
        guard tied.count > 1 else { return tied[0].centroids }
        return tied.map { (smoothed: viterbi($0.centroids).cost, centroids: $0.centroids) }
            .min { $0.smoothed < $1.smoothed }!.centroids
    }

    private func seed(_ k: Int, _ sample: [Int], _ generator: inout SeededRandom) -> [Float] {
        var centroids = [Float](repeating: 0, count: k * dimension)
        func copy(_ frame: Int, to c: Int) {
            for i in 0 ..< dimension { centroids[c * dimension + i] = frames[frame * dimension + i] }
        }
        copy(sample[Int(generator.next() % UInt64(sample.count))], to: 0)
        var nearest = sample.map { 1 - dot($0, centroids, 0) }
        for c in 1 ..< k {
            let weights = nearest.map { Double(max(0, $0) * max(0, $0)) }
            let total = weights.reduce(0, +)
            var pick = Int(generator.next() % UInt64(sample.count))
            if total > 0 {
                var target = generator.unit() * total
                for (n, weight) in weights.enumerated() {
                    target -= weight
                    if target <= 0 { pick = n; break }
                }
            }
            copy(sample[pick], to: c)
            for (n, frame) in sample.enumerated() { nearest[n] = min(nearest[n], 1 - dot(frame, centroids, c)) }
        }
        return centroids
    }

    /// Normalised mean of each cluster's frames; an empty cluster keeps its old centre.
    func means(_ k: Int, labels: [Int], of sample: [Int], keeping old: [Float]) -> [Float] {
        var sums = [Float](repeating: 0, count: k * dimension)
        for (n, frame) in sample.enumerated() where labels[n] >= 0 {
            let base = labels[n] * dimension
            for i in 0 ..< dimension { sums[base + i] += frames[frame * dimension + i] }
        }
        for c in 0 ..< k {
            let range = c * dimension ..< (c + 1) * dimension
            let norm = sums[range].reduce(0) { $0 + $1 * $1 }.squareRoot()
            if norm > 0 {
                for i in range { sums[i] /= norm }
            } else {
                for i in range { sums[i] = old[i] }
            }
        }
        return sums
    }

    // MARK: Coherence

    /// The second way a speaker is kept: every cluster the smoothing uses speaks in at least
    /// `minimumTurns` separate turns, and every pair of clusters is coherent in time (`coherence`).
    private func recurs(_ smoothed: [Int], _ centroids: [Float], _ k: Int) -> Bool {
        guard config.minimumCoherence > 0 else { return false }
        guard (Self.turns(smoothed, k).filter { $0 > 0 }.min() ?? 0) >= config.minimumTurns else { return false }
        switch config.pairwiseTurns {
        case .off: break
        case .everyPair:
            if Self.fewestAlternatingTurns(smoothed, k) < config.minimumTurns { return false }
        case .nearestPair:
            if let (a, b) = nearestPair(centroids, used: Set(smoothed)),
               Self.fewestAlternatingTurns(smoothed.filter { $0 == a || $0 == b }, k) < config.minimumTurns { return false }
        }
        return coherence(nearestLabels(centroids), k) >= config.minimumCoherence
    }

    /// Separate turns (runs of equal labels) of each of clusters 0 ..< k.
    static func turns(_ labels: [Int], _ k: Int) -> [Int] {
        var turns = [Int](repeating: 0, count: k)
        var previous = -1
        for label in labels where label != previous {
            turns[label] += 1
            previous = label
        }
        return turns
    }

    /// The two used clusters whose centres are most alike: where one voice split in two would be.
    private func nearestPair(_ centroids: [Float], used: Set<Int>) -> (Int, Int)? {
        let used = used.sorted()
        var best: (pair: (Int, Int), similarity: Float)?
        for (i, a) in used.enumerated() {
            for b in used[(i + 1)...] {
                var similarity: Float = 0
                for d in 0 ..< dimension { similarity += centroids[a * dimension + d] * centroids[b * dimension + d] }
                if best == nil || similarity > best!.similarity { best = ((a, b), similarity) }
            }
        }
        return best?.pair
    }

    /// Over every pair of used clusters, the fewest runs either has in the labels kept to those two.
    static func fewestAlternatingTurns(_ labels: [Int], _ k: Int) -> Int {
        let used = Set(labels).sorted()
        var fewest = Int.max
        for (i, a) in used.enumerated() {
            for b in used[(i + 1)...] {
                let runs = turns(labels.filter { $0 == a || $0 == b }, k)
                fewest = min(fewest, runs[a], runs[b])
            }
        }
        return fewest == Int.max ? 0 : fewest
    }

    private func nearestLabels(_ centroids: [Float]) -> [Int] {
        let k = centroids.count / dimension
        return (0 ..< frameCount).map { nearest($0, centroids, k).cluster }
    }

    /// The least coherent pair of clusters, in standard deviations. For clusters a and b, take every
    /// two frames `coherenceLag` apart in one stretch of speech that both fall in a or b: if a and b
    /// were one voice split by what is being said, whether the two frames agree would be a coin
    /// weighted by the clusters' sizes, and they would change cluster in about 2·na·nb/(na+nb)² of
    /// the pairs. Two people change only where the turn changes: far fewer. The statistic is how
    /// many standard deviations (binomial) the observed changes fall below that expectation.
    /// Unsmoothed labels: smoothing would manufacture the very coherence being tested.
    func coherence(_ labels: [Int], _ k: Int) -> Float {
        let lag = max(1, config.coherenceLag)
        var counts = [Int](repeating: 0, count: k)
        for label in labels { counts[label] += 1 }
        var same = [Int](repeating: 0, count: k * k), changed = [Int](repeating: 0, count: k * k)
        for n in 0 ..< max(0, frameCount - lag) {
            if let positions {
                guard positions[n].stretch == positions[n + lag].stretch, positions[n + lag].index - positions[n].index == lag else { continue }
            }
            let (a, b) = (min(labels[n], labels[n + lag]), max(labels[n], labels[n + lag]))
            if a == b {
                for other in 0 ..< k where other != a { same[min(a, other) * k + max(a, other)] += 1 }
            } else {
                changed[a * k + b] += 1
            }
        }
        var worst = Float.infinity
        for a in 0 ..< k {
            for b in a + 1 ..< k {
                let pairs = Float(same[a * k + b] + changed[a * k + b])
                let (na, nb) = (Float(counts[a]), Float(counts[b]))
                guard pairs > 0, na + nb > 0 else { worst = min(worst, 0); continue }
                let p = 2 * na * nb / ((na + nb) * (na + nb))
                let spread = (pairs * p * (1 - p)).squareRoot()
                let z = spread > 0 ? (pairs * p - Float(changed[a * k + b])) / spread : 0
                worst = min(worst, z)
            }
        }
        return worst
    }

    // MARK: Smoothing

    /// The label sequence minimising Σ cosine distance + switchPenalty × changes of label.
    func viterbi(_ centroids: [Float]) -> (labels: [Int], cost: Float) {
        let k = centroids.count / dimension
        let penalty = config.switchPenalty
        var accumulated = (0 ..< k).map { 1 - dot(0, centroids, $0) }
        var back = [Int32](repeating: 0, count: frameCount * k)
        var next = accumulated
        for n in 1 ..< frameCount {
            var bestPrevious = 0
            for c in 1 ..< k where accumulated[c] < accumulated[bestPrevious] { bestPrevious = c }
            for c in 0 ..< k {
                let switchCost = accumulated[bestPrevious] + penalty
                let (from, cost) = accumulated[c] <= switchCost ? (c, accumulated[c]) : (bestPrevious, switchCost)
                back[n * k + c] = Int32(from)
                next[c] = cost + 1 - dot(n, centroids, c)
            }
            swap(&accumulated, &next)
        }
        var last = 0
        for c in 1 ..< k where accumulated[c] < accumulated[last] { last = c }
        let cost = accumulated[last]
        var labels = [Int](repeating: 0, count: frameCount)
        labels[frameCount - 1] = last
        for n in stride(from: frameCount - 1, to: 0, by: -1) {
            last = Int(back[n * k + last])
            labels[n - 1] = last
        }
        return (labels, cost)
    }

    /// Labels renumbered 0 ..< count in order of first appearance (also for labels that folding left with gaps).
    static func renumbered(_ labels: [Int]) -> [Int] {
        var map: [Int: Int] = [:]
        return labels.map { label in
            if let mapped = map[label] { return mapped }
            map[label] = map.count
            return map.count - 1
        }
    }
}

