/// A voice the count folded into another's cluster, found by a segmentation model (speakerkit's
/// overlap pass): in a window where the model hears two local speakers each talking alone, and the
/// clustering put both groups of frames in one cluster, one of them may be a person the count missed.
///
/// Off by default (`DiarizerConfig.segmentedVoiceSplit`, option `segmented_voice_split`): decided on
/// the calibration sets (ami-dev trn01–04 19.5 → 17.3 %, counts 1/4 → 2/4; synthetic unchanged), it
/// made the report sets worse when measured once (ami-dev's seven other files 26.0 → 26.3 %, fresh
/// two-voice meetings 2.9 → 3.3 % with counts 6/6 → 4/6), so it stays an experiment (docs/speakerkit.md).
extension StreamingDiarizer {
    /// One more speaker grown from such a group (`SmoothedKMeans.splitting(_:around:)`), kept only if it
    /// passes the same rule as `splitOffUncountedVoice` (speech, separate turns, margin); of the groups
    /// that pass, the largest margin wins; one split per finalize. Nothing without `localActivity`, with
    /// an exact count, or at the count's maximum.
    ///
    /// Why this and not the model's local speakers alone: the model's speakers are per window, and a
    /// window's two voices can be one person's two registers; the split is a hypothesis the session's
    /// every frame must support (the margin), as for a voice found from outliers.
    func splitOffSegmentedVoice(_ labels: [Int], clustering: SmoothedKMeans, items: [(embedding: [Float], seconds: Double)],
                                frames: [(region: Int, frame: Int)]) -> [Int] {
        guard !localActivity.isEmpty, config.uncountedVoiceMargin > 0, hint.exact == nil else { return labels }
        let labels = SmoothedKMeans.renumbered(labels)
        let count = (labels.max() ?? -1) + 1
        guard count < hint.upperBound ?? clustering.config.maxSpeakers else { return labels }
        var rule = SmoothedKMeans.UncountedVoiceRule.default
        // The model's window is evidence the outlier search lacks, so the new voice needs only a seed's
        // speech in one turn; the margin, which judges it against every frame of the session, stays.
        (rule.minimumSeconds, rule.minimumTurns, rule.minimumMargin) = (0, 1, config.uncountedVoiceMargin)
        var best: (labels: [Int], margin: Float)?
        var tried = Set<[Int]>()
        let spans = frames.map { (startSeconds: regions[$0.region].frames[$0.frame].startSeconds, endSeconds: regions[$0.region].frames[$0.frame].endSeconds) }
        for group in Self.soloGroups(localActivity, frames: spans, minimumFrames: rule.minimumSeedFrames)
        where tried.insert(group).inserted {
            let seed = clustering.means(1, labels: [Int](repeating: 0, count: group.count), of: group,
                                        keeping: [Float](repeating: 0, count: clustering.dimension))
            guard let split = clustering.splitting(labels, around: seed),
                  let margin = clustering.margin(ofCluster: count, in: split, seconds: items.map(\.seconds), rule: rule) else { continue }
            if best == nil || margin > best!.margin { best = (split, margin) }
        }
        guard let best else { return labels }
        logger.debug("segmented voice split off", metadata: ["clusters": "\(count + 1)", "margin": "\(best.margin)"])
        return best.labels
    }

    /// For each window, the embedded frames (indices into `frames`) whose middle falls where one local
    /// speaker talks alone, grouped by local speaker; returned are the groups of windows with two or
    /// more such groups (at least `minimumFrames` each), which is where the model heard two voices.
    /// Which of them the clustering merged is for the split's rule to find out.
    static func soloGroups(_ windows: [LocalActivityWindow], frames: [(startSeconds: Double, endSeconds: Double)], minimumFrames: Int) -> [[Int]] {
        var groups: [[Int]] = []
        var cursor = 0
        for window in windows where !window.activeMasks.isEmpty {
            let first = window.centreSeconds(frame: 0) - window.frameStepSeconds / 2
            let last = window.centreSeconds(frame: window.activeMasks.count - 1) + window.frameStepSeconds / 2
            var byLocal: [Int: [Int]] = [:]
            while cursor < frames.count, (frames[cursor].startSeconds + frames[cursor].endSeconds) / 2 < first { cursor += 1 }
            var index = cursor
            while index < frames.count {
                let middle = (frames[index].startSeconds + frames[index].endSeconds) / 2
                if middle >= last { break }
                let frame = Int(((middle - window.firstCentreSeconds) / window.frameStepSeconds).rounded())
                if window.activeMasks.indices.contains(frame), let local = LocalActivityWindow.soloSpeaker(window.activeMasks[frame]) {
                    byLocal[local, default: []].append(index)
                }
                index += 1
            }
            let kept = byLocal.keys.sorted().compactMap { byLocal[$0]!.count >= minimumFrames ? byLocal[$0] : nil }
            if kept.count >= 2 { groups += kept }
        }
        return groups
    }
}
