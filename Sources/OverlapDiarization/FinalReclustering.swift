import Foundation
import SpeakerManager
import SpeakerSegmentation
import StreamingDiarization

/// Finalize: the live clusters revised, then the windows' activity added up frame by frame into turns
/// (pyannote's offline recipe on the streaming windows: the audio is not analysed again). The live
/// clusters' centroids merge while closer than `finalDistance`, or down to the count hint; local
/// speakers without an embedding follow their track.
///
/// Per frame, as many clusters are active as the windows covering it counted local speakers on
/// average (rounded), the most active first: overlap is kept where the segmentation heard it. Pure.
struct FinalReclustering {
    struct Turn: Sendable, Equatable {
        var cluster: Int
        var startSeconds: Double
        var endSeconds: Double
        var confidence: Float
    }

    struct Result {
        var turns: [Turn]
        var centroids: [Int: (embedding: [Float], seconds: Double)]
        /// Clusters that are an enrolled person's voice → that person's label.
        var knownMatches: [Int: Int32]
    }

    let config: OverlapDiarizerConfig
    let hint: SpeakerCountHint
    let geometry: SegmentationFrames
    let known: [(speaker: Int32, embedding: [Float], seconds: Double)]

    func run(windows: [AnalysedWindow], totalSamples: Int) -> Result? {
        var items: [(window: Int, local: Int)] = []
        var embeddings: [[Float]] = []
        var weights: [Double] = []
        var labels: [Int] = []
        for (w, window) in windows.enumerated() {
            for local in 0 ..< window.speakerCount {
                guard let embedding = window.embeddings[local] else { continue }
                items.append((w, local))
                embeddings.append(OnlineSpeakerClustering.unit(embedding))
                weights.append(max(0.1, window.cleanSeconds[local]))
                labels.append(window.liveSpeakers[local].map(Int.init) ?? -1)
            }
        }
        guard !items.isEmpty else { return nil }
        // Start from the live clusters (items the live pass left out start alone), then merge the two
        // closest centroids while they are nearer than `finalDistance` (or the count hint asks for
        // fewer). Items are not moved one by one: a single short embedding is noisier than the live
        // pass's evidence (its tracks and the one-to-one rule), which the merged labels keep.
        var next = (labels.max() ?? 0) + 1
        for index in labels.indices where labels[index] < 0 {
            labels[index] = next
            next += 1
        }
        labels = mergeCentroids(labels, embeddings: embeddings, weights: weights, liveSeconds: liveSeconds(windows))
        var mapping = [[Int: Int]](repeating: [:], count: windows.count)
        labels = absorbSmallClusters(labels, embeddings: embeddings, weights: weights)
        for (index, item) in items.enumerated() { mapping[item.window][item.local] = labels[index] }
        let centroids = Self.centroids(labels, embeddings: embeddings, weights: weights)
        let clusterIDs = centroids.keys.sorted()
        // Local speakers without an embedding take the cluster of their track's nearest embedded window.
        var trackClusters: [Int: [(window: Int, cluster: Int)]] = [:]
        for (w, window) in windows.enumerated() {
            for local in 0 ..< window.speakerCount {
                if let track = window.tracks[local], let cluster = mapping[w][local] { trackClusters[track, default: []].append((w, cluster)) }
            }
        }
        for (w, window) in windows.enumerated() {
            for local in 0 ..< window.speakerCount where mapping[w][local] == nil {
                guard let track = window.tracks[local], let candidates = trackClusters[track] else { continue }
                let used = Set(mapping[w].values)
                if let nearest = candidates.filter({ !used.contains($0.cluster) }).min(by: { abs($0.window - w) < abs($1.window - w) }) {
                    mapping[w][local] = nearest.cluster
                }
            }
        }
        let turns = reconstruct(windows: windows, mapping: mapping, clusters: clusterIDs, totalSamples: totalSamples)
        var knownMatches: [Int: Int32] = [:]
        for cluster in clusterIDs {
            let nearest = known.map { ($0.speaker, SpeakerUtilities.cosineDistance($0.embedding, centroids[cluster]!.embedding)) }
                .min { $0.1 < $1.1 }
            if let nearest, nearest.1 < config.enrolledDistance, !knownMatches.values.contains(nearest.0) { knownMatches[cluster] = nearest.0 }
        }
        return Result(turns: turns, centroids: centroids, knownMatches: knownMatches)
    }

    /// Centroid linkage from the given clusters: the closest two merge while nearer than
    /// `finalDistance` or while there are more than the hint allows, never below the hint's minimum.
    private func mergeCentroids(_ labels: [Int], embeddings: [[Float]], weights: [Double], liveSeconds: [Int: Double]) -> [Int] {
        var labels = labels
        var speech = liveSeconds
        let minimum = max(1, hint.exact ?? hint.minimum ?? 1)
        let maximum = hint.exact ?? hint.maximum
        while true {
            let centroids = Self.centroids(labels, embeddings: embeddings, weights: weights)
            let ids = centroids.keys.sorted()
            guard ids.count > minimum else { break }
            var best: (a: Int, b: Int, distance: Float)?
            for (i, a) in ids.enumerated() {
                for b in ids[(i + 1)...] {
                    let distance = SpeakerUtilities.cosineDistance(centroids[a]!.embedding, centroids[b]!.embedding)
                    if best == nil || distance < best!.distance { best = (a, b, distance) }
                }
            }
            guard let best else { break }
            let keep: Int, drop: Int
            // An exact count replaces the distance rule (as num_speakers does in pyannote's pipeline).
            if hint.exact == nil, best.distance < config.finalDistance {
                // The smaller joins the larger, which keeps its label (so live labels survive).
                (keep, drop) = speech[best.a, default: 0] >= speech[best.b, default: 0] ? (best.a, best.b) : (best.b, best.a)
            } else if let maximum, ids.count > maximum {
                // Too many for the hint: the cluster with the least speech is the likeliest mistake (a
                // mixture, a short noise); it joins its nearest.
                drop = ids.min { (speech[$0, default: 0], $0) < (speech[$1, default: 0], $1) }!
                keep = ids.filter { $0 != drop }.min {
                    SpeakerUtilities.cosineDistance(centroids[drop]!.embedding, centroids[$0]!.embedding)
                        < SpeakerUtilities.cosineDistance(centroids[drop]!.embedding, centroids[$1]!.embedding)
                }!
            } else {
                break
            }
            for index in labels.indices where labels[index] == drop { labels[index] = keep }
            speech[keep, default: 0] += speech.removeValue(forKey: drop) ?? 0
        }
        return labels
    }

    /// Seconds each live speaker was published for: every window's newest step, by its live mapping.
    /// (How much a speaker talked, which embeddings alone do not say: tracks are embedded only now and then.)
    private func liveSeconds(_ windows: [AnalysedWindow]) -> [Int: Double] {
        var seconds: [Int: Double] = [:]
        let step = Int(config.stepSeconds * Double(geometry.sampleRate))
        for window in windows {
            let end = window.startSample + window.frameCount * geometry.shiftSamples + geometry.receptiveFieldSamples
            for (local, speaker) in window.liveSpeakers {
                for frame in 0 ..< window.frameCount where window.isActive(frame: frame, speaker: local, threshold: config.activeProbability) {
                    let centre = window.startSample + frame * geometry.shiftSamples + geometry.receptiveFieldSamples / 2
                    if centre >= end - step { seconds[Int(speaker), default: 0] += geometry.frameSeconds }
                }
            }
        }
        return seconds
    }

    /// Clusters with less speech than `minimumClusterSeconds` join the nearest cluster that has
    /// enough (when one does, and no exact count was asked for).
    private func absorbSmallClusters(_ labels: [Int], embeddings: [[Float]], weights: [Double]) -> [Int] {
        guard hint.exact == nil else { return labels }
        var seconds: [Int: Double] = [:]
        for (label, weight) in zip(labels, weights) { seconds[label, default: 0] += weight }
        let large = Set(seconds.filter { $0.value >= config.minimumClusterSeconds }.keys)
        let minimum = hint.minimum ?? 1
        guard !large.isEmpty, large.count >= minimum, large.count < seconds.count else { return labels }
        let centroids = Self.centroids(labels, embeddings: embeddings, weights: weights)
        var result = labels
        for (index, label) in labels.enumerated() where !large.contains(label) {
            result[index] = large.min {
                SpeakerUtilities.cosineDistance(embeddings[index], centroids[$0]!.embedding)
                    < SpeakerUtilities.cosineDistance(embeddings[index], centroids[$1]!.embedding)
            }!
        }
        return result
    }

    static func centroids(_ labels: [Int], embeddings: [[Float]], weights: [Double]) -> [Int: (embedding: [Float], seconds: Double)] {
        var sums: [Int: (sum: [Float], seconds: Double)] = [:]
        for (index, label) in labels.enumerated() {
            var entry = sums[label] ?? ([Float](repeating: 0, count: embeddings[index].count), 0)
            for i in entry.sum.indices { entry.sum[i] += Float(weights[index]) * embeddings[index][i] }
            entry.seconds += weights[index]
            sums[label] = entry
        }
        return sums.mapValues { (OnlineSpeakerClustering.unit($0.sum), $0.seconds) }
    }

    /// Frame-level aggregation of the mapped windows into turns.
    private func reconstruct(windows: [AnalysedWindow], mapping: [[Int: Int]], clusters: [Int], totalSamples: Int) -> [Turn] {
        let shift = geometry.shiftSamples
        let frameCount = totalSamples / shift + 1
        let index = Dictionary(uniqueKeysWithValues: clusters.enumerated().map { ($1, $0) })
        var activation = [Float](repeating: 0, count: frameCount * clusters.count)
        var coverage = [Float](repeating: 0, count: frameCount)
        var speakers = [Float](repeating: 0, count: frameCount)
        for (w, window) in windows.enumerated() {
            for frame in 0 ..< window.frameCount {
                let centre = window.startSample + frame * shift + geometry.receptiveFieldSamples / 2
                let global = centre / shift
                guard global < frameCount else { continue }
                // Frames near a window's edges know less of their context: they weigh less (Hamming).
                let position = window.frameCount > 1 ? Double(frame) / Double(window.frameCount - 1) : 0.5
                let weight = Float(0.54 - 0.46 * cos(2 * Double.pi * position))
                coverage[global] += weight
                var active: Float = 0
                for local in 0 ..< window.speakerCount {
                    let probability = window.probability(frame: frame, speaker: local)
                    if probability >= config.activeProbability { active += 1 }
                    if let cluster = mapping[w][local], let column = index[cluster] {
                        activation[global * clusters.count + column] += weight * probability
                    }
                }
                speakers[global] += weight * active
            }
        }
        var turns: [Turn] = []
        var open: [Int: (start: Int, sum: Float, frames: Int)] = [:]
        func close(_ column: Int, at frame: Int) {
            guard let run = open.removeValue(forKey: column) else { return }
            let start = Double(run.start * shift) / Double(geometry.sampleRate)
            let end = Double(frame * shift) / Double(geometry.sampleRate)
            turns.append(Turn(cluster: clusters[column], startSeconds: start, endSeconds: end, confidence: min(1, run.sum / Float(max(1, run.frames)))))
        }
        for frame in 0 ... frameCount {
            var chosen: Set<Int> = []
            if frame < frameCount, coverage[frame] > 0 {
                let count = Int((speakers[frame] / coverage[frame]).rounded())
                let ranked = (0 ..< clusters.count).filter { activation[frame * clusters.count + $0] > 0 }
                    .sorted { activation[frame * clusters.count + $0] > activation[frame * clusters.count + $1] }
                chosen = Set(ranked.prefix(count))
            }
            for column in 0 ..< clusters.count {
                if chosen.contains(column) {
                    let value = activation[frame * clusters.count + column] / coverage[frame]
                    if var run = open[column] {
                        run.sum += value
                        run.frames += 1
                        open[column] = run
                    } else {
                        open[column] = (frame, value, 1)
                    }
                } else {
                    close(column, at: frame)
                }
            }
        }
        return Self.tidy(turns, joinGapSeconds: config.joinGapSeconds, minimumSeconds: config.minimumTurnSeconds)
    }

    /// One speaker's turns closer than the gap joined; turns shorter than the minimum dropped.
    static func tidy(_ turns: [Turn], joinGapSeconds: Double, minimumSeconds: Double) -> [Turn] {
        var result: [Turn] = []
        var last: [Int: Int] = [:]
        for turn in turns.sorted(by: { ($0.startSeconds, $0.cluster) < ($1.startSeconds, $1.cluster) }) {
            if let index = last[turn.cluster], turn.startSeconds - result[index].endSeconds <= joinGapSeconds {
                result[index].endSeconds = max(result[index].endSeconds, turn.endSeconds)
                continue
            }
            last[turn.cluster] = result.count
            result.append(turn)
        }
        return result.filter { $0.endSeconds - $0.startSeconds >= minimumSeconds }
    }
}
