import Logging
import SpeakerManager
import SpeakerSyncAudio

/// A failure inside the diarizer (embedding or speaker tracking); `code` is stable.
public struct DiarizerError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case embeddingFailed = "embedding_failed"
        case speakerTrackingFailed = "speaker_tracking_failed"
        case finalized = "finalized"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Streaming speaker diarization: VAD → frames of speech → speaker embeddings of windows around
/// each frame → SpeakerManager (assign-or-create, FluidAudio semantics) → turns.
///
/// Turns come out as soon as a frame's look-ahead audio has arrived (about a second after the audio
/// they describe). A speaker change inside one stretch of speech shows up as frames assigned to a
/// different speaker, not only at pauses. At `finalize` the whole session's frame embeddings are
/// re-clustered offline (smoothed k-means by default, see `SmoothedKMeans`; the speaker-count hints
/// fix or bound the count), clusters are matched to the online speakers by overlap so that labels
/// stay with the same person, enrolled names are confirmed per cluster, and changed turns are
/// re-published as revisions.
///
/// Not thread-safe: one instance per session, driven from that session's queue.
public final class StreamingDiarizer {
    public let config: DiarizerConfig
    public let hint: SpeakerCountHint
    public let speakers: SpeakerManager
    let detector: any SpeechDetector
    let embedder: any SpeakerEmbedder
    let logger: Logger

    var audio: AudioHistory
    var loudness: LoudnessTrack
    /// Audio pushed but not yet given to the VAD (less than `analysisBlockSeconds`).
    var unanalyzed: [Float] = []
    var regions: [SpeechRegion] = []
    /// Regions before this index are settled: nothing in them changes until finalize.
    var firstUnsettled = 0
    var nextSerial = 0
    var emitted: [UInt64: DiarizerTurn] = [:]
    var turnIDsByRegion: [Int: Set<UInt64>] = [:]
    var pending: [UInt64: DiarizerTurn] = [:]
    var lastSpeaker: Int32?
    var isFinalized = false
    /// Speakers a live re-clustering folded into others: their ids are never given to anyone else.
    var retiredSpeakerIDs = Set<Int32>()
    /// Embedded speech at which the next live re-clustering runs (nil: `liveReclusterSeconds`).
    var nextLiveReclusterSeconds: Double?
    /// Live re-clusterings run so far.
    public internal(set) var liveReclusterCount = 0
    /// The most voices one finished segmentation window has heard alone so far (`heard(_:)`): a live
    /// re-clustering's lower bound on the count. 0: no window yet, or the floor is off.
    public internal(set) var segmentedSpeakerFloor = 0
    /// `segmentedSpeakerFloor` when the last live pass ran: a floor raised since then calls the next one.
    var floorAtLastLivePass = 0
    /// Enrolled people (permanent known speakers) as they were loaded, for the check at finalize.
    let enrolledProfiles: [Int32: [Float]]

    public private(set) var embeddedFrameCount = 0
    /// Frames load shedding's wider step left to their neighbours' labels (live).
    public private(set) var shedFrameCount = 0
    /// One frame in this many gets an embedding of its own (1: every frame); the others are labelled
    /// from their neighbours, as frames too short for a window are. The host raises it while it cannot
    /// keep up (`LoadShedding`), so labels arrive on time at a coarser grain instead of ever later.
    /// A region's first and a closed region's last frame are always embedded. May change at any push.
    public var embeddingStride = 1
    /// A segmentation model's windows over this session (speakerkit's overlap pass sets them before
    /// finalize): evidence of two voices inside one cluster (`splitOffSegmentedVoice`). Empty: none.
    public var localActivity: [LocalActivityWindow] = []
    /// Windows of shed frames kept for finalize (`DiarizerConfig.shedRetentionSeconds`), 16-bit.
    var shedAudio: ShedAudio

    public init(config: DiarizerConfig = .default, hint: SpeakerCountHint = .none, detector: any SpeechDetector,
                embedder: any SpeakerEmbedder, speakers: SpeakerManager, logger: Logger) {
        self.config = config
        self.hint = hint
        self.detector = detector
        self.embedder = embedder
        self.speakers = speakers
        self.logger = logger
        audio = AudioHistory(capacitySamples: Int(config.audioHistorySeconds * Double(config.sampleRate)))
        loudness = LoudnessTrack(sampleRate: config.sampleRate)
        shedAudio = ShedAudio(capacitySamples: Int(config.shedRetentionSeconds * Double(config.sampleRate)))
        var enrolled: [Int32: [Float]] = [:]
        for speaker in speakers.getSpeakerList() where speaker.isPermanent {
            if let id = Int32(speaker.id) { enrolled[id] = speaker.currentEmbedding }
        }
        enrolledProfiles = enrolled
    }

    // MARK: Input

    public func push(_ samples: [Float]) throws {
        guard let round = try pushDeferringEmbeddings(samples) else { return }
        try complete(round, embeddings: embed(round.windows))
    }

    /// `push` up to the encoder: the windows now due for an embedding, which the caller embeds (with
    /// other sessions' in one batch: `DiarizerBatch`) and hands back to `complete` before this
    /// diarizer's next call. Nil when nothing needs embedding (what could be published was).
    public func pushDeferringEmbeddings(_ samples: [Float]) throws -> EmbeddingRound? {
        guard !isFinalized else { throw DiarizerError(.finalized, "audio after finalize") }
        audio.append(samples)
        loudness.append(samples)
        let blockSamples = config.analysisBlockSeconds * Double(config.sampleRate)
        if unanalyzed.isEmpty, Double(samples.count) >= blockSamples {
            // No block, or a chunk that fills a block alone: no staging copy.
            detector.accept(samples: samples)
        } else {
            unanalyzed.append(contentsOf: samples)
            // A batch of frames that is due goes out on time: blocks delay only what the VAD alone
            // decides (where speech starts and ends), never the labels of ongoing speech.
            guard Double(unanalyzed.count) >= blockSamples || streamEndSeconds >= batchDueSeconds else { return nil }
            analyzePending()
        }
        return beginRound(final: false)
    }

    /// The second half of a deferred push: the round's embeddings (in the order of its windows)
    /// assign its frames to speakers, and the turns they make are published.
    public func complete(_ round: EmbeddingRound, embeddings: [[Float]]) throws {
        guard embeddings.count == round.slots.count else {
            throw DiarizerError(.embeddingFailed, "\(embeddings.count) embeddings for \(round.slots.count) windows")
        }
        embeddedFrameCount += round.slots.count
        for (slot, embedding) in zip(round.slots, embeddings) {
            regions[slot.region].frames[slot.frame].embedding = embedding
            try assignOnline(region: slot.region, frame: slot.frame, embedding: embedding)
        }
        try reclusterLiveIfDue()
        publishAndSettle()
    }

    private func embed(_ windows: [[Float]]) throws -> [[Float]] {
        do {
            return try embedder.embed(windows)
        } catch {
            throw DiarizerError(.embeddingFailed, "\(error)")
        }
    }

    /// When the open stretch of speech will have its next batch of frames ready (their look-ahead
    /// audio in), if it stays open; infinity when no speech is open. Frames of an open region end on
    /// the grid origin + n·frameSeconds.
    private var batchDueSeconds: Double {
        guard let region = regions.last, region.isOpen else { return .infinity }
        let processedEnd = region.frames.last(where: \.processed)?.endSeconds ?? region.originSeconds
        return processedEnd + Double(config.minimumBatch) * config.frameSeconds + config.lookaheadSeconds
    }

    /// No more audio: close open speech, label everything, re-cluster offline, publish revisions.
    public func finalize() throws {
        guard !isFinalized else { return }
        analyzePending()
        detector.flush()
        try process(final: true)
        isFinalized = true
        try embedRetainedWindows()
        try recluster()
    }

    /// Hands the audio pushed since the last block to the VAD.
    private func analyzePending() {
        guard !unanalyzed.isEmpty else { return }
        detector.accept(samples: unanalyzed)
        unanalyzed.removeAll(keepingCapacity: true)
    }

    /// Turns published since the last call (new, revised or removed), in id order.
    public func pullTurns() -> [DiarizerTurn] {
        let turns = pending.values.sorted { $0.id < $1.id }
        pending.removeAll(keepingCapacity: true)
        return turns
    }

    /// A speaker's voice profile from the frames now labelled with them: the duration-weighted mean of
    /// their frame embeddings (after finalize, of the re-clustered labels). Nil for a speaker with none.
    public func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        var vectors: [[Float]] = []
        var weights: [Double] = []
        for region in regions {
            for frame in region.frames where frame.speaker == speaker {
                guard let embedding = frame.embedding else { continue }
                vectors.append(embedding)
                weights.append(frame.endSeconds - frame.startSeconds)
            }
        }
        if vectors.isEmpty, let known = speakers.getSpeaker(for: String(speaker)) {
            return (known.currentEmbedding, known.durationSeconds)
        }
        guard !vectors.isEmpty else { return nil }
        return (AgglomerativeClustering.centroid(vectors, weights: weights), weights.reduce(0, +))
    }

    /// Every frame so far, in time order.
    public var frames: [DiarizerFrame] {
        regions.flatMap { region in
            region.frames.map {
                DiarizerFrame(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, windowSeconds: $0.windowSeconds,
                              embedding: $0.embedding, speaker: $0.speaker)
            }
        }
    }

    /// Speakers that have turns now.
    public var speakersWithTurns: [Int32] {
        Array(Set(emitted.values.map(\.speaker))).sorted()
    }

    /// An id no speaker of this session has had (known, enrolled, retired, or with turns): for a speaker
    /// that finalize's overlap pass adds (`OverlapTurns.OrphanVoice`).
    public var unusedSpeakerID: Int32 {
        let known = speakers.speakerIds.compactMap { Int32($0) } + enrolledProfiles.keys
        return ((known + retiredSpeakerIDs + emitted.values.map(\.speaker)).max() ?? 0) + 1
    }

    /// The overlap pass's new speaker for this session (`DiarizerConfig.orphanVoiceSeconds`), unless it
    /// is off, the session said how many people there are, or `finalSpeakers` already has as many as it
    /// allows.
    public func orphanVoice(finalSpeakers: Set<Int32>) -> OverlapTurns.OrphanVoice? {
        guard config.orphanVoiceSeconds > 0, hint.exact == nil else { return nil }
        if let maximum = hint.maximum, finalSpeakers.count >= maximum { return nil }
        return OverlapTurns.OrphanVoice(speaker: unusedSpeakerID, minimumSeconds: config.orphanVoiceSeconds)
    }

    // MARK: Online

    private var streamEndSeconds: Double { Double(audio.endSample) / Double(config.sampleRate) }

    private func process(final: Bool) throws {
        guard let round = beginRound(final: final) else { return }
        try complete(round, embeddings: embed(round.windows))
    }

    /// Frames whose look-ahead audio has arrived become an embedding round (marked processed now, so
    /// a round is never handed out twice); nil when there is none yet, having published what changed.
    private func beginRound(final: Bool) -> EmbeddingRound? {
        updateRegions(final: final)
        let known = final ? streamEndSeconds : min(detector.analyzedSeconds, streamEndSeconds)
        // Frames whose look-ahead audio has arrived (all of a closed region's).
        var ready: [(region: Int, frame: Int, start: Double, end: Double)] = []
        var closedRegionReady = false
        for r in firstUnsettled ..< regions.count {
            extendFrames(r, knownSeconds: known)
            let region = regions[r]
            let regionEnd = region.endSeconds ?? known
            for f in region.frames.indices where !region.frames[f].processed {
                let frame = region.frames[f]
                guard region.endSeconds != nil || frame.endSeconds + config.lookaheadSeconds <= known else { break }
                let centre = (frame.startSeconds + frame.endSeconds) / 2
                ready.append((r, f, max(region.startSeconds, centre - config.windowSeconds / 2), min(regionEnd, centre + config.windowSeconds / 2)))
                if region.endSeconds != nil { closedRegionReady = true }
            }
        }
        // Batch frames for the encoder, but never hold back the end of a stretch of speech.
        guard final || closedRegionReady || ready.count >= config.minimumBatch else {
            for r in firstUnsettled ..< regions.count { publish(region: r) }
            return nil
        }
        var round = EmbeddingRound()
        let rate = Double(config.sampleRate)
        for item in ready {
            regions[item.region].frames[item.frame].processed = true
            regions[item.region].frames[item.frame].windowSeconds = item.end - item.start
            guard item.end - item.start >= config.minWindowSeconds else { continue }
            let window = audio.slice(Int(item.start * rate), Int(item.end * rate))
            if embeddingStride > 1, item.frame % embeddingStride != 0,
               regions[item.region].isOpen || item.frame < regions[item.region].frames.count - 1 {
                shedFrameCount += 1
                shedAudio.retain(region: item.region, frame: item.frame, startSample: Int(item.start * rate), window: window)
                continue
            }
            round.slots.append((item.region, item.frame))
            round.windows.append(window)
        }
        guard !round.slots.isEmpty else {
            publishAndSettle()
            return nil
        }
        return round
    }

    /// Finalize: the kept windows of shed frames get their embeddings (no online decision: the
    /// re-clustering labels them), in batches of a few.
    private func embedRetainedWindows() throws {
        defer { shedAudio.removeAll() }
        // A frame the VAD's later decision trimmed off its region is gone: nothing to label.
        let kept = shedAudio.frames.filter { $0.frame < regions[$0.region].frames.count }
        for start in stride(from: 0, to: kept.count, by: 8) {
            let batch = kept[start ..< min(kept.count, start + 8)]
            let embeddings = try embed(batch.map { shedAudio.window(of: $0) })
            for (kept, embedding) in zip(batch, embeddings) { regions[kept.region].frames[kept.frame].embedding = embedding }
            embeddedFrameCount += batch.count
        }
    }

    private func publishAndSettle() {
        for r in firstUnsettled ..< regions.count { publish(region: r) }
        while firstUnsettled < regions.count, regions[firstUnsettled].isSettled { firstUnsettled += 1 }
    }

    private func updateRegions(final: Bool) {
        for segment in detector.popSegments() where segment.endSeconds > segment.startSeconds {
            if let open = regions.lastIndex(where: { $0.isOpen }), segment.endSeconds > regions[open].startSeconds {
                regions[open].endSeconds = max(segment.endSeconds, regions[open].startSeconds)
                regions[open].startSeconds = min(regions[open].startSeconds, segment.startSeconds)
                trimFrames(open)
            } else if let last = regions.last, let end = last.endSeconds, segment.startSeconds < end {
                regions[regions.count - 1].endSeconds = max(end, segment.endSeconds)
            } else {
                regions.append(SpeechRegion(serial: nextSerial, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds))
                nextSerial += 1
            }
        }
        if let ongoing = detector.ongoingSpeechStartSeconds, !final {
            let hasOpen = regions.last?.isOpen ?? false
            if !hasOpen, ongoing >= (regions.last?.endSeconds ?? -1) {
                regions.append(SpeechRegion(serial: nextSerial, startSeconds: ongoing, endSeconds: nil))
                nextSerial += 1
            }
        }
        if final, let open = regions.lastIndex(where: { $0.isOpen }) {
            regions[open].endSeconds = max(regions[open].startSeconds, streamEndSeconds)
            trimFrames(open)
        }
    }

    /// Adds the frames the region now has room for; a closed region's short tail joins its last frame.
    private func extendFrames(_ r: Int, knownSeconds: Double) {
        let hop = config.frameSeconds
        let origin = regions[r].originSeconds
        let isOpen = regions[r].isOpen
        let limit = regions[r].endSeconds ?? knownSeconds
        var next = regions[r].frames.last?.endSeconds ?? regions[r].startSeconds
        while next < limit - 1e-9 {
            let gridEnd = origin + (((next - origin) / hop + 1e-6).rounded(.down) + 1) * hop
            let end = min(limit, gridEnd)
            if isOpen && end < gridEnd - 1e-9 { break }   // open region: whole frames only
            if !isOpen, end - next < hop / 2, let last = regions[r].frames.indices.last {
                regions[r].frames[last].endSeconds = end
            } else {
                regions[r].frames.append(SpeechRegion.Frame(startSeconds: next, endSeconds: end))
            }
            next = end
        }
        if let first = regions[r].frames.indices.first, regions[r].frames[first].startSeconds > regions[r].startSeconds {
            regions[r].frames[first].startSeconds = regions[r].startSeconds   // the VAD moved the start earlier
        }
    }

    /// A region just closed: frames cut while it was open may reach past where the speech ended.
    private func trimFrames(_ r: Int) {
        guard let end = regions[r].endSeconds else { return }
        regions[r].frames.removeAll { $0.startSeconds >= end - 1e-9 }
        if let last = regions[r].frames.indices.last, regions[r].frames[last].endSeconds > end {
            regions[r].frames[last].endSeconds = end
        }
    }

    private func assignOnline(region r: Int, frame f: Int, embedding: [Float]) throws {
        let seconds = regions[r].frames[f].windowSeconds
        let full = hint.upperBound.map { speakers.speakerCount >= $0 } ?? false
        do {
            // With as many speakers as the hint allows, a frame goes to the nearest one whatever the distance.
            let decision = try speakers.assign(
                embedding, speechDurationSeconds: seconds, speakerThreshold: full ? 2 : config.speakerThreshold)
            switch decision {
            case .assigned(let id, let distance, _):
                setSpeaker(r, f, Int32(id), distance)
            case .created(let id, _):
                setSpeaker(r, f, Int32(id), 0)
            case .rejected(.tooShortForNewSpeaker(_, _, let nearest)):
                if let nearest { setSpeaker(r, f, Int32(nearest.id), nearest.distance) }
            }
        } catch {
            throw DiarizerError(.speakerTrackingFailed, "\(error)")
        }
    }

    private func setSpeaker(_ r: Int, _ f: Int, _ speaker: Int32?, _ distance: Float) {
        regions[r].frames[f].speaker = speaker
        regions[r].frames[f].distance = distance
        if let speaker { lastSpeaker = speaker }
    }

    // MARK: Turns

    /// Frames without their own speaker take the nearest labelled frame's in the region, else the
    /// speaker heard last: a short "yes" between two stretches of one person stays with that person.
    private func effectiveSpeakers(_ region: SpeechRegion) -> [Int32?] {
        let own = region.frames.map(\.speaker)
        return own.indices.map { index in
            if let speaker = own[index] { return speaker }
            guard region.frames[index].processed else { return nil }
            for distance in 1 ..< max(2, own.count) {
                if index - distance >= 0, let speaker = own[index - distance] { return speaker }
                if index + distance < own.count, let speaker = own[index + distance] { return speaker }
            }
            return lastSpeakerBefore(region)
        }
    }

    private func lastSpeakerBefore(_ region: SpeechRegion) -> Int32? {
        for other in regions.reversed() where other.serial < region.serial {
            if let speaker = other.frames.last(where: { $0.speaker != nil })?.speaker { return speaker }
        }
        return nil
    }

    func turns(of region: SpeechRegion) -> [DiarizerTurn] {
        let labels = effectiveSpeakers(region)
        var result: [DiarizerTurn] = []
        var runStart: Int?
        for index in 0 ... labels.count {
            let boundary = index == labels.count || labels[index] == nil || (runStart.map { labels[$0] != labels[index] } ?? true)
            if boundary, let start = runStart {
                let frames = region.frames[start ..< index]
                let distances = frames.compactMap(\.distance)
                let meanDistance = distances.isEmpty ? config.speakerThreshold : distances.reduce(0, +) / Float(distances.count)
                let confidence = max(0, min(1, 1 - meanDistance / max(config.speakerThreshold, 1e-3) / 2))
                result.append(DiarizerTurn(
                    id: UInt64(region.serial) << 32 | UInt64(start), speaker: labels[start]!,
                    startSeconds: frames.first!.startSeconds, endSeconds: frames.last!.endSeconds, confidence: confidence))
                runStart = nil
            }
            if index < labels.count, labels[index] != nil, runStart == nil { runStart = index }
        }
        return movedIntoPauses(result)
    }

    /// Where one speaker's turn meets another's, frame boundaries fall wherever the 0.5 s grid puts
    /// them; if there is a pause within 1.5 frames of the change (the grid's half frame plus the
    /// window's reach; `LoudnessTrack.pause`), the first turn ends where the pause begins and the next
    /// starts where it ends, so the pause is nobody's speech. Changes inside continuous or overlapped
    /// speech have no such pause and stay on the grid.
    private func movedIntoPauses(_ turns: [DiarizerTurn]) -> [DiarizerTurn] {
        guard config.speakerChangePauseDecibels > 0 else { return turns }
        return Self.movedIntoPauses(turns, frameSeconds: config.frameSeconds) { seconds in
            loudness.pause(near: seconds, radiusSeconds: 1.5 * config.frameSeconds,
                           minimumSeconds: config.speakerChangePauseSeconds, dropDecibels: config.speakerChangePauseDecibels)
        }
    }

    /// The boundary moves of `movedIntoPauses`, given the pause (if any) near a time. A boundary moves
    /// only if both of its turns keep at least 0.1 s, in order: a short turn whose start an earlier
    /// pause already moved could otherwise be pushed past its own end, a turn the host has to drop
    /// (seen on ami-dev at real time as a turn from 7.26 s to 7.24 s) while the turn it revises stays stale.
    static func movedIntoPauses(_ turns: [DiarizerTurn], frameSeconds: Double,
                                pause: (Double) -> (startSeconds: Double, endSeconds: Double)?) -> [DiarizerTurn] {
        guard turns.count > 1 else { return turns }
        var turns = turns
        let minimumTurnSeconds = 0.1
        for index in 1 ..< turns.count {
            let (before, after) = (turns[index - 1], turns[index])
            guard before.speaker != after.speaker, abs(before.endSeconds - after.startSeconds) < 1e-6,
                  let pause = pause(after.startSeconds)
            else { continue }
            let end = max(before.startSeconds + minimumTurnSeconds, min(before.endSeconds + frameSeconds, pause.startSeconds))
            let start = max(end, min(after.endSeconds - minimumTurnSeconds, max(after.startSeconds - frameSeconds, pause.endSeconds)))
            guard end <= after.endSeconds - minimumTurnSeconds, start <= after.endSeconds - minimumTurnSeconds else { continue }
            turns[index - 1].endSeconds = end
            turns[index].startSeconds = start
        }
        return turns
    }

    /// Diffs the region's turns against what was published and queues the changes.
    func publish(region r: Int) {
        let region = regions[r]
        let current = turns(of: region)
        let ids = Set(current.map(\.id))
        for turn in current where emitted[turn.id] != turn {
            emitted[turn.id] = turn
            pending[turn.id] = turn
        }
        for id in turnIDsByRegion[region.serial, default: []] where !ids.contains(id) {
            if var removed = emitted.removeValue(forKey: id) {
                removed.isRemoved = true
                pending[id] = removed
            }
        }
        turnIDsByRegion[region.serial] = ids
    }
}
