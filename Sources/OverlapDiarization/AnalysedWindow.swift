import SpeakerSegmentation

/// One segmentation window of a session and what became of it: where it starts, its local speakers'
/// activity (quantised to bytes: a session keeps every window until finalize), their embeddings and
/// the global speakers they were given live.
public struct AnalysedWindow: Sendable {
    public var startSample: Int
    public var frameCount: Int
    public var speakerCount: Int
    /// Frame × speaker probabilities × 255.
    var activity: [UInt8]
    /// Per local speaker: the embedding, if it had enough speech for one.
    public var embeddings: [[Float]?]
    /// Per local speaker: seconds alone in the window (the weight of its embedding).
    public var cleanSeconds: [Double]
    /// Live assignment: local speaker → global speaker.
    public var liveSpeakers: [Int: Int32]
    /// Per local speaker: the track it belongs to (the same voice followed from window to window by
    /// where windows overlap), nil when it does not talk in this window.
    public var tracks: [Int?]

    public init(startSample: Int, activity: LocalSpeakerActivity) {
        self.startSample = startSample
        frameCount = activity.frameCount
        speakerCount = activity.speakerCount
        self.activity = activity.probabilities.map { UInt8((max(0, min(1, $0)) * 255).rounded()) }
        embeddings = Array(repeating: nil, count: activity.speakerCount)
        cleanSeconds = Array(repeating: 0, count: activity.speakerCount)
        liveSpeakers = [:]
        tracks = Array(repeating: nil, count: activity.speakerCount)
    }

    public func probability(frame: Int, speaker: Int) -> Float {
        Float(activity[frame * speakerCount + speaker]) / 255
    }

    public func isActive(frame: Int, speaker: Int, threshold: Float) -> Bool {
        probability(frame: frame, speaker: speaker) >= threshold
    }

    /// Frames in which `speaker` talks, alone (`clean`) or at all.
    public func activeFrames(of speaker: Int, threshold: Float, clean: Bool) -> [Int] {
        (0 ..< frameCount).filter { frame in
            guard isActive(frame: frame, speaker: speaker, threshold: threshold) else { return false }
            guard clean else { return true }
            return (0 ..< speakerCount).allSatisfy { $0 == speaker || !isActive(frame: frame, speaker: $0, threshold: threshold) }
        }
    }

    /// Sample ranges (session timeline) of `frames`, each frame standing for `shift` samples around its
    /// centre, adjacent frames joined.
    public func sampleRanges(of frames: [Int], geometry: SegmentationFrames) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        let half = geometry.shiftSamples / 2
        for frame in frames {
            let centre = startSample + frame * geometry.shiftSamples + geometry.receptiveFieldSamples / 2
            let range = (centre - half) ..< (centre - half + geometry.shiftSamples)
            if let last = ranges.last, last.upperBound >= range.lowerBound {
                ranges[ranges.count - 1] = last.lowerBound ..< range.upperBound
            } else {
                ranges.append(range)
            }
        }
        return ranges
    }

    /// How much two windows' local speakers agree where they overlap in time: for each pair, the
    /// seconds during which both are active (the earlier window's frame at the same time): the
    /// stitching evidence that makes tracks.
    public func overlapAgreement(with earlier: AnalysedWindow, geometry: SegmentationFrames, threshold: Float) -> [[Double]] {
        var agreement = [[Double]](repeating: [Double](repeating: 0, count: earlier.speakerCount), count: speakerCount)
        let offsetSamples = startSample - earlier.startSample
        for frame in 0 ..< frameCount {
            // The earlier window's frame at the same time.
            let other = Int((Double(frame * geometry.shiftSamples + offsetSamples) / Double(geometry.shiftSamples)).rounded())
            guard other >= 0, other < earlier.frameCount else { continue }
            for mine in 0 ..< speakerCount where isActive(frame: frame, speaker: mine, threshold: threshold) {
                for theirs in 0 ..< earlier.speakerCount where earlier.isActive(frame: other, speaker: theirs, threshold: threshold) {
                    agreement[mine][theirs] += geometry.frameSeconds
                }
            }
        }
        return agreement
    }

    /// Each local speaker's predecessor in `earlier`: the local speaker it shares most active time
    /// with, at least `minimumSeconds`, one to one (the pair sharing most first).
    public func predecessors(in earlier: AnalysedWindow, geometry: SegmentationFrames, threshold: Float, minimumSeconds: Double) -> [Int: Int] {
        let agreement = overlapAgreement(with: earlier, geometry: geometry, threshold: threshold)
        var pairs: [(mine: Int, theirs: Int, seconds: Double)] = []
        for mine in agreement.indices {
            for theirs in agreement[mine].indices where agreement[mine][theirs] >= minimumSeconds { pairs.append((mine, theirs, agreement[mine][theirs])) }
        }
        pairs.sort { ($0.seconds, -$0.mine, -$0.theirs) > ($1.seconds, -$1.mine, -$1.theirs) }
        var result: [Int: Int] = [:]
        var taken: Set<Int> = []
        for pair in pairs where result[pair.mine] == nil && !taken.contains(pair.theirs) {
            result[pair.mine] = pair.theirs
            taken.insert(pair.theirs)
        }
        return result
    }
}
