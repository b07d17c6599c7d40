import Logging
import SpeakerManager

/// Finalize's re-clustering, run live a few times early in a session (`DiarizerConfig.liveReclusterSeconds`).
///
/// Why: online, each frame goes to the nearest speaker within `speakerThreshold` or founds a new one,
/// and close voices (two TTS voices, sample.wav's two people, 0.09 apart in GE2E) sit inside that
/// threshold, so the live labels hold fewer people than the final ones and the first-published turns of
/// a third or fourth voice go to someone else until finalize. The offline pass (smoothed k-means with its
/// turn-taking test) separates them from the frames' whole history. Run on the frames so far, it
/// revises the turns published until then (revisions, as at finalize), and the online speakers then
/// follow its clusters: each speaker's profile becomes its cluster's centroid, a cluster new to the
/// session becomes a speaker, and a speaker no cluster kept is retired. Frames that arrive afterwards
/// are assigned against those profiles, so the people it found are found live from then on.
///
/// Cost: each pass is one finalize pass over the frames so far. They come at growing intervals (each
/// after the embedded speech has grown by `liveReclusterGrowth`, and by `liveReclusterSeconds` at
/// least) and stop after `liveReclusterUntilSeconds` of speech, so a session pays at most a few
/// finalize passes of bounded size, however long it runs.
extension StreamingDiarizer {
    /// Runs the live pass when the embedded speech has reached its next mark.
    func reclusterLiveIfDue() throws {
        let first = config.liveReclusterSeconds
        guard first > 0, !isFinalized else { return }
        let seconds = Double(embeddedFrameCount) * config.frameSeconds
        guard seconds <= config.liveReclusterUntilSeconds else { return }
        // A window that heard more voices than the online speakers hold calls a pass at once, rather than
        // at the next mark: those people are being published under one name until then.
        let heardMore = segmentedSpeakerFloor > floorAtLastLivePass && segmentedSpeakerFloor > speakers.speakerCount
        let onSchedule = seconds >= nextLiveReclusterSeconds ?? first
        guard onSchedule || heardMore else { return }
        if onSchedule { nextLiveReclusterSeconds = max(seconds + first, seconds * config.liveReclusterGrowth) }
        floorAtLastLivePass = segmentedSpeakerFloor
        try recluster(live: true)
        liveReclusterCount += 1
    }

    /// A window of the overlap pass's segmentation, finished while the session runs: the voices it hears
    /// alone (`LocalActivityWindow.soloSpeakerCount`) raise the next live passes' lower bound on the
    /// count (`DiarizerConfig.liveSoloSpeakerSeconds`). Finalize takes no floor from it: its count is
    /// decided over the whole session, where the segmented split did not carry to the report sets.
    public func heard(_ window: LocalActivityWindow) {
        guard config.liveSoloSpeakerSeconds > 0, !isFinalized else { return }
        segmentedSpeakerFloor = max(segmentedSpeakerFloor, window.soloSpeakerCount(minimumSeconds: config.liveSoloSpeakerSeconds))
    }

    /// The online speakers take the clusters' shape (see the type's comment). An enrolled person's
    /// profile stays their enrolment's: finalize decides enrolled names against it. Only a speaker that
    /// held frames (`online`) and lost them all is retired: a known voice that has not spoken yet (an
    /// earlier session's speaker after a reconnect) stays, so it is still recognised when it does.
    func followClusters(_ speakerOfCluster: [Int: Int32], labels: [Int], items: [(embedding: [Float], seconds: Double)],
                        online: Set<Int32>) {
        let clusters = Self.summaries(labels, items)
        for (cluster, speaker) in speakerOfCluster.sorted(by: { $0.key < $1.key }) {
            guard let summary = clusters[cluster] else { continue }
            let id = String(speaker)
            let existing = speakers.getSpeaker(for: id)
            guard existing?.isPermanent != true else { continue }
            do {
                try speakers.upsertSpeaker(id: id, currentEmbedding: summary.centroid, durationSeconds: summary.seconds,
                                           name: existing == nil ? "Speaker \(id)" : nil)
            } catch {
                logger.warning("live re-clustering could not update a speaker", metadata: ["speaker": "\(id)", "error": "\(error)"])
            }
        }
        let kept = Set(speakerOfCluster.values)
        for id in speakers.speakerIds {
            guard let number = Int32(id), online.contains(number), !kept.contains(number) else { continue }
            // Permanent (enrolled) speakers stay: removeSpeaker refuses them.
            if speakers.removeSpeaker(id) { retiredSpeakerIDs.insert(number) }
        }
        if let last = lastSpeaker, !kept.contains(last) { lastSpeaker = nil }
    }
}
