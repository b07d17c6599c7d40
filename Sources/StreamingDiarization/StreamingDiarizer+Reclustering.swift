import Logging
import SpeakerManager

/// The offline half of `StreamingDiarizer`: at finalize, one re-clustering over every embedded frame
/// of the session revises the online labels (kept where the clusters agree with them). The same pass
/// may also run live (`DiarizerConfig.liveReclusterSeconds`, StreamingDiarizer+LiveReclustering.swift).
extension StreamingDiarizer {
    /// Re-clusters every embedded frame of the session and relabels, keeping online labels where the
    /// clusters agree with them. `live`: mid-session; the online speakers then follow the clusters.
    func recluster(live: Bool = false) throws {
        var items: [(frames: [(Int, Int)], embedding: [Float], seconds: Double)] = []
        var labels: [Int]
        var clustering: SmoothedKMeans?
        switch config.offlineClustering {
        case .smoothedKMeans:
            // Items: every embedded frame, in time order (the smoothing needs the sequence).
            for r in regions.indices {
                for f in regions[r].frames.indices {
                    guard let embedding = regions[r].frames[f].embedding else { continue }
                    items.append(([(r, f)], embedding, regions[r].frames[f].endSeconds - regions[r].frames[f].startSeconds))
                }
            }
            guard !items.isEmpty else { return }
            var kmeans = SmoothedKMeans.Config(switchPenalty: config.switchPenalty, minimumGain: config.minimumCountGain,
                                               minimumCoherence: config.minimumCountCoherence)
            if !live { kmeans.pairwiseTurns = config.pairwiseTurns }
            kmeans.coherenceLag = max(1, Int((config.windowSeconds / config.frameSeconds).rounded(.up)))
            let positions = items.map { SmoothedKMeans.FramePosition(stretch: $0.frames[0].0, index: $0.frames[0].1) }
            let smoothedKMeans = SmoothedKMeans(items.map(\.embedding), positions: positions, config: kmeans)
            // Live, at least the voices one segmentation window heard (never past the hint's maximum).
            let heardFloor = live ? min(segmentedSpeakerFloor, hint.upperBound ?? Int.max) : 0
            labels = smoothedKMeans.cluster(minClusters: max(hint.lowerBound ?? 1, heardFloor), maxClusters: hint.upperBound).labels
            clustering = smoothedKMeans
        case .agglomerative:
            (items, labels) = agglomerativeItems()
            guard !items.isEmpty else { return }
        }
        let vectors = items.map { (embedding: $0.embedding, seconds: $0.seconds) }
        if let clustering {
            // The uncounted voice first: an enrolled profile then finds that voice already split off and
            // names it, instead of growing a second cluster for it (ami-dev with everyone enrolled: 28.0 %
            // the other way round, 25.0 % this way).
            labels = splitOffUncountedVoice(labels, clustering: clustering, items: vectors)
            if config.segmentedVoiceSplit {
                labels = splitOffSegmentedVoice(labels, clustering: clustering, items: vectors, frames: items.map { (region: $0.frames[0].0, frame: $0.frames[0].1) })
            }
            labels = splitOffEnrolledVoices(labels, clustering: clustering, items: vectors)
        }
        labels = foldSmallClusters(labels, items: vectors)
        if config.offlineClustering == .smoothedKMeans {
            labels = StretchReassignment(minimumFrames: config.minimumStretchFrames)
                .refine(items.map(\.embedding), labels: SmoothedKMeans.renumbered(labels), stretches: stretches(of: items.map { $0.frames[0] }))
        }
        // Match clusters to online speakers, so "Speaker 1" stays the person first shown as Speaker 1
        // (ClusterNumbering says how and why).
        var numbered: [ClusterNumbering.Frame] = []
        for (item, label) in zip(items, labels) {
            for (r, f) in item.frames {
                numbered.append(.init(cluster: label, speaker: regions[r].frames[f].speaker,
                                      seconds: regions[r].frames[f].endSeconds - regions[r].frames[f].startSeconds))
            }
        }
        // Live, a pass is taken only when its clusters outnumber the speakers the online labels give the
        // same frames; otherwise those labels stand until the next pass or finalize. Why: early in a
        // session the count has little to go on, and a pass that merged two online speakers (when that
        // person talked again, the merged profile took them, and the next pass gave them a new number)
        // made live labels worse than none: one two-voice meeting went from 7 to 42 % live DER in the
        // first trial (docs/accuracy.md). What the pass is for is the voices online assignment folds
        // into another; merges wait for finalize, which decides them over the whole session.
        let onlineSpeakers: Set<Int32> = live ? ClusterNumbering.onlineSpeakers(of: numbered) : []
        if live, Set(labels).count <= onlineSpeakers.count {
            logger.debug("live re-clustering not taken", metadata: [
                "items": "\(items.count)", "clusters": "\(Set(labels).count)", "online_speakers": "\(onlineSpeakers.count)",
                "heard_floor": "\(segmentedSpeakerFloor)", "audio_seconds": "\(regions.last?.frames.last?.endSeconds ?? 0)",
            ])
            return
        }
        var speakerOfCluster = ClusterNumbering.speakers(of: numbered, foundingSeconds: config.numberFoundingSeconds)
        var used = Set(speakerOfCluster.values)
        assignEnrolledSpeakers(&speakerOfCluster, used: &used, labels: labels, items: vectors)
        var nextID = (speakers.speakerIds.compactMap { Int32($0) }.max() ?? 0) + 1
        // A speaker a live pass retired never comes back as somebody else (the device heard that name).
        used.formUnion(retiredSpeakerIDs)
        for cluster in Set(labels).sorted() where speakerOfCluster[cluster] == nil {
            while used.contains(nextID) { nextID += 1 }
            speakerOfCluster[cluster] = nextID
            used.insert(nextID)
        }
        for (item, label) in zip(items, labels) {
            for (r, f) in item.frames { regions[r].frames[f].speaker = speakerOfCluster[label] }
        }
        if live { followClusters(speakerOfCluster, labels: labels, items: vectors, online: onlineSpeakers) }
        for r in regions.indices { publish(region: r) }
        logger.debug(live ? "live re-clustering" : "offline re-clustering", metadata: [
            "items": "\(items.count)", "clusters": "\(Set(labels).count)", "online_speakers": "\(speakers.speakerCount)",
            "heard_floor": "\(segmentedSpeakerFloor)", "audio_seconds": "\(regions.last?.frames.last?.endSeconds ?? 0)",
        ])
    }

    /// The frames (in time order) cut where speech stops: between regions, and at every pause the
    /// loudness track reaches within half a frame of a frame boundary.
    func stretches(of frames: [(Int, Int)]) -> [Range<Int>] {
        guard !frames.isEmpty else { return [] }
        let pauses = config.speakerChangePauseDecibels > 0
            ? loudness.pauses(minimumSeconds: config.speakerChangePauseSeconds, dropDecibels: config.speakerChangePauseDecibels, contextSeconds: 1)
            : []
        let reach = config.frameSeconds / 2
        var result: [Range<Int>] = []
        var start = 0
        var nextPause = 0
        for n in 1 ..< frames.count {
            let previous = regions[frames[n - 1].0].frames[frames[n - 1].1], frame = regions[frames[n].0].frames[frames[n].1]
            let boundary = frame.startSeconds
            while nextPause < pauses.count, pauses[nextPause].endSeconds + reach < boundary { nextPause += 1 }
            let atPause = nextPause < pauses.count && pauses[nextPause].startSeconds - reach <= boundary
            if frame.startSeconds - previous.endSeconds > 1e-3 || atPause {
                result.append(start ..< n)
                start = n
            }
        }
        result.append(start ..< frames.count)
        return result
    }

    /// An enrolled person's profile as evidence for the speaker count. For each enrolled person whom no
    /// cluster matches (`enrolledPairs`, one to one), one more cluster is grown from their profile
    /// (`SmoothedKMeans.splitting`). It is kept only if it survives the smoothing with at least
    /// `minClusterSeconds` of speech and is then matched to that person: its centroid within
    /// `enrolledSpeakerThreshold` of their profile and nearer it than any other enrolled person claims.
    /// That is the test that gives a cluster an enrolled name, so a split is kept exactly where the name
    /// will follow; people not in the meeting attract no frames or fail it (docs/accuracy.md measures
    /// both). An exact count or a reached maximum in the hint is never exceeded.
    func splitOffEnrolledVoices(_ labels: [Int], clustering: SmoothedKMeans, items: [(embedding: [Float], seconds: Double)]) -> [Int] {
        guard !enrolledProfiles.isEmpty else { return labels }
        var labels = SmoothedKMeans.renumbered(labels)
        let threshold = config.enrolledSpeakerThreshold
        var clusters = Self.summaries(labels, items)
        var matched = Self.enrolledPairs(clusters, enrolledProfiles, threshold: threshold)
        for (speaker, profile) in enrolledProfiles.sorted(by: { $0.key < $1.key }) {
            if let upper = hint.upperBound, clusters.count >= upper { break }
            guard !matched.contains(where: { $0.speaker == speaker }), let split = clustering.splitting(labels, around: profile) else { continue }
            let grown = clusters.count
            let splitClusters = Self.summaries(split, items)
            let splitMatched = Self.enrolledPairs(splitClusters, enrolledProfiles, threshold: threshold)
            guard let seconds = splitClusters[grown]?.seconds, seconds >= config.minClusterSeconds,
                  splitMatched.contains(where: { $0.cluster == grown && $0.speaker == speaker })
            else { continue }
            (labels, clusters, matched) = (split, splitClusters, splitMatched)
            logger.debug("enrolled voice split off", metadata: ["speaker": "\(speaker)", "seconds": "\(seconds)", "clusters": "\(grown + 1)"])
        }
        return labels
    }

    /// One more speaker for a voice the count folded into another (`SmoothedKMeans.splittingOffUncountedVoice`),
    /// unless the session gave an exact count or the clusters already reach its maximum (or `maxSpeakers`).
    func splitOffUncountedVoice(_ labels: [Int], clustering: SmoothedKMeans, items: [(embedding: [Float], seconds: Double)]) -> [Int] {
        guard config.uncountedVoiceMargin > 0, hint.exact == nil else { return labels }
        let labels = SmoothedKMeans.renumbered(labels)
        let count = (labels.max() ?? -1) + 1
        guard count < hint.upperBound ?? clustering.config.maxSpeakers else { return labels }
        var rule = SmoothedKMeans.UncountedVoiceRule.default
        (rule.minimumSeconds, rule.minimumMargin) = (config.uncountedVoiceSeconds, config.uncountedVoiceMargin)
        guard let split = clustering.splittingOffUncountedVoice(labels, seconds: items.map(\.seconds), rule: rule) else { return labels }
        logger.debug("uncounted voice split off", metadata: ["clusters": "\(count + 1)"])
        return split
    }

    /// Enrolled people matched to clusters one to one: every (cluster, person) pair within `threshold`,
    /// nearest first, each cluster and each person taken once.
    private static func enrolledPairs(_ clusters: [Int: (centroid: [Float], seconds: Double)], _ profiles: [Int32: [Float]],
                                      threshold: Float) -> [(distance: Float, cluster: Int, speaker: Int32)] {
        var pairs: [(distance: Float, cluster: Int, speaker: Int32)] = []
        for (cluster, summary) in clusters {
            for (speaker, profile) in profiles {
                let distance = SpeakerUtilities.cosineDistance(summary.centroid, profile)
                if distance <= threshold { pairs.append((distance, cluster, speaker)) }
            }
        }
        pairs.sort { ($0.distance, $0.cluster, $0.speaker) < ($1.distance, $1.cluster, $1.speaker) }
        var clustersTaken = Set<Int>(), speakersTaken = Set<Int32>()
        return pairs.filter { pair in
            guard !clustersTaken.contains(pair.cluster), !speakersTaken.contains(pair.speaker) else { return false }
            clustersTaken.insert(pair.cluster)
            speakersTaken.insert(pair.speaker)
            return true
        }
    }

    /// Enrolled names are decided by voice, not by who held them online: each enrolled person goes to
    /// the cluster whose centroid is nearest their profile, if within `enrolledSpeakerThreshold`; nearest
    /// pairs first, one cluster per person and one person per cluster. Online, the loose per-frame
    /// threshold lets every close voice take an enrolled name, so keeping the name on the cluster that
    /// overlapped it most gave it to whoever talked most: with two close voices (sample.wav's two people
    /// are 0.09 apart) the person themself lost their name to the other and got a new number. A cluster
    /// that matches a person takes their name even when the overlap mapping gave it a session speaker:
    /// an enrolled voice that founded a session number online (its first frames outside the online
    /// threshold of its profile) is still that person, and the number gives way to the name. Other
    /// clusters keep the session speaker the mapping gave them; a cluster left without a name gets a new one.
    func assignEnrolledSpeakers(_ speakerOfCluster: inout [Int: Int32], used: inout Set<Int32>, labels: [Int],
                                        items: [(embedding: [Float], seconds: Double)]) {
        guard !enrolledProfiles.isEmpty else { return }
        let clusters = Self.summaries(labels, items)
        let threshold = config.enrolledSpeakerThreshold
        for (cluster, speaker) in speakerOfCluster where enrolledProfiles[speaker] != nil {
            speakerOfCluster[cluster] = nil
            used.remove(speaker)
        }
        for pair in Self.enrolledPairs(clusters, enrolledProfiles, threshold: threshold) {
            if let session = speakerOfCluster[pair.cluster] { used.remove(session) }
            speakerOfCluster[pair.cluster] = pair.speaker
            used.insert(pair.speaker)
            logger.debug("enrolled identity confirmed", metadata: ["speaker": "\(pair.speaker)", "distance": "\(pair.distance)"])
        }
    }

    /// Average linkage on runs of up to 4 consecutive frames with one online speaker (fewer items,
    /// steadier means).
    func agglomerativeItems() -> (items: [(frames: [(Int, Int)], embedding: [Float], seconds: Double)], labels: [Int]) {
        var items: [(frames: [(Int, Int)], embedding: [Float], seconds: Double)] = []
        for r in regions.indices {
            var run: [(Int, Int)] = []
            func flush() {
                guard !run.isEmpty else { return }
                let vectors = run.compactMap { regions[$0.0].frames[$0.1].embedding }
                let weights = run.map { regions[$0.0].frames[$0.1].windowSeconds }
                items.append((run, AgglomerativeClustering.centroid(vectors, weights: weights),
                              run.reduce(0) { $0 + regions[$1.0].frames[$1.1].endSeconds - regions[$1.0].frames[$1.1].startSeconds }))
                run = []
            }
            for f in regions[r].frames.indices where regions[r].frames[f].embedding != nil {
                if let last = run.last, regions[r].frames[last.1].speaker != regions[r].frames[f].speaker || run.count >= 4 || last.1 != f - 1 { flush() }
                run.append((r, f))
            }
            flush()
        }
        guard !items.isEmpty else { return ([], []) }
        let labels = AgglomerativeClustering.cluster(
            items.map(\.embedding), weights: items.map(\.seconds), threshold: config.clusterThreshold,
            minClusters: hint.lowerBound ?? 1, maxClusters: hint.upperBound)
        return (items, labels)
    }

    /// Clusters with less speech than `minClusterSeconds` join the nearest larger cluster, unless
    /// that would leave fewer clusters than the hint's minimum.
    func foldSmallClusters(_ labels: [Int], items: [(embedding: [Float], seconds: Double)]) -> [Int] {
        var labels = labels
        while true {
            let clusters = Self.summaries(labels, items)
            guard clusters.count > max(1, hint.lowerBound ?? 1) else { return labels }
            guard let small = clusters.keys.filter({ clusters[$0]!.seconds < config.minClusterSeconds })
                .min(by: { clusters[$0]!.seconds < clusters[$1]!.seconds }) else {
                return labels
            }
            let centroid = clusters[small]!.centroid
            let target = clusters.keys.filter { $0 != small }.min {
                SpeakerUtilities.cosineDistance(centroid, clusters[$0]!.centroid) < SpeakerUtilities.cosineDistance(centroid, clusters[$1]!.centroid)
            }!
            labels = labels.map { $0 == small ? target : $0 }
        }
    }

    /// Each cluster's seconds of speech and duration-weighted centroid.
    static func summaries(_ labels: [Int], _ items: [(embedding: [Float], seconds: Double)]) -> [Int: (centroid: [Float], seconds: Double)] {
        var members: [Int: (vectors: [[Float]], weights: [Double])] = [:]
        for (label, item) in zip(labels, items) {
            members[label, default: ([], [])].vectors.append(item.embedding)
            members[label, default: ([], [])].weights.append(item.seconds)
        }
        return members.mapValues { (AgglomerativeClustering.centroid($0.vectors, weights: $0.weights), $0.weights.reduce(0, +)) }
    }
}
