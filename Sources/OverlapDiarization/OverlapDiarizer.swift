import Logging
import SpeakerSegmentation
import StreamingDiarization

/// The overlap-aware streaming pipeline (the design diart published, reimplemented): every
/// `stepSeconds` a segmentation model looks at the last `windowSeconds` and finds up to three local
/// speakers, overlap included; each local speaker with enough speech gets an embedding of the audio
/// where it talks (alone, when it can); `OnlineSpeakerClustering` maps the window's local speakers to
/// distinct global speakers; the window's newest step is published as turns, which may overlap. At
/// finalize one re-clustering over every window's embeddings (`FinalReclustering`) revises all turns.
///
/// Used on one thread at a time (a session's queue).
public final class OverlapDiarizer {
    public let config: OverlapDiarizerConfig
    let hint: SpeakerCountHint
    let segmenter: any WindowSegmenter
    let embedder: any SpeakerEmbedder
    let logger: Logger
    let knownSpeakers: [(speaker: Int32, embedding: [Float], seconds: Double)]
    private let sampleRate = 16_000
    private var geometry: SegmentationFrames { segmenter.frames }

    /// The audio of the last window (and what has come since), from `bufferStartSample` on.
    private var buffer: [Float] = []
    private var bufferStartSample = 0
    private var totalSamples = 0
    private var nextWindowEndSample: Int
    private(set) var windows: [AnalysedWindow] = []
    private var clustering: OnlineSpeakerClustering
    /// Live turns are published up to here (session samples).
    private var liveFrontierSample = 0
    private var outbox = TurnOutbox()
    /// The live turn each speaker may still extend.
    private var openTurns: [Int32: UInt64] = [:]
    private var nextTurnID: UInt64 = 1
    private var nextTrack = 0
    /// Where each track was last embedded (session samples).
    private var lastEmbeddedSample: [Int: Int] = [:]
    private var finalProfiles: [Int32: (embedding: [Float], seconds: Double)]?
    private var isFinalized = false

    public init(config: OverlapDiarizerConfig, hint: SpeakerCountHint = .none, segmenter: any WindowSegmenter, embedder: any SpeakerEmbedder,
                known: [(speaker: Int32, embedding: [Float], seconds: Double)] = [], logger: Logger) {
        self.config = config
        self.hint = hint
        self.segmenter = segmenter
        self.embedder = embedder
        self.logger = logger
        knownSpeakers = known
        clustering = OnlineSpeakerClustering(known: known)
        nextWindowEndSample = Int(config.stepSeconds * 16_000)
    }

    public var windowSamples: Int { Int(config.windowSeconds * Double(sampleRate)) }

    public func push(_ samples: [Float]) throws {
        precondition(!isFinalized, "push after finalize")
        buffer.append(contentsOf: samples)
        totalSamples += samples.count
        while totalSamples >= nextWindowEndSample {
            try analyseWindow(endingAt: nextWindowEndSample)
            nextWindowEndSample += Int(config.stepSeconds * Double(sampleRate))
        }
        // Keep one window of audio before the last window's end: finalize's window reaches back that far.
        let keepFrom = max(0, nextWindowEndSample - Int(config.stepSeconds * Double(sampleRate)) - windowSamples)
        if keepFrom > bufferStartSample + sampleRate {
            buffer.removeFirst(min(buffer.count, keepFrom - bufferStartSample))
            bufferStartSample = keepFrom
        }
    }

    /// Turns published since the last call (new, extended, or removed).
    public func pullTurns() -> [DiarizerTurn] { outbox.pull() }

    /// No more audio: the last partial step is analysed, then the whole session is re-clustered.
    public func finalize() throws {
        guard !isFinalized else { return }
        isFinalized = true
        let lastEnd = nextWindowEndSample - Int(config.stepSeconds * Double(sampleRate))
        if totalSamples > lastEnd, totalSamples - max(0, totalSamples - windowSamples) >= geometry.receptiveFieldSamples {
            try analyseWindow(endingAt: totalSamples)
        }
        guard !windows.isEmpty else { return }
        let seconds = Double(totalSamples) / Double(sampleRate)
        guard seconds <= config.finalMaximumSeconds else {
            logger.info("session longer than final_max_seconds; keeping the live turns", metadata: ["seconds": "\(Int(seconds))"])
            return
        }
        let final = FinalReclustering(config: config, hint: hint, geometry: geometry, known: knownSpeakers)
        guard let result = final.run(windows: windows, totalSamples: totalSamples) else { return }
        let live = outbox.current.values.map { SpeakerRelabelling.Span(speaker: Int($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let spans = result.turns.map { SpeakerRelabelling.Span(speaker: $0.cluster, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        var labels = SpeakerRelabelling.labels(for: spans, earlier: live, reserved: Set(knownSpeakers.map { Int($0.speaker) }))
        // An enrolled person keeps their own label whatever the live turns said.
        for (cluster, known) in result.knownMatches { labels[cluster] = Int(known) }
        for id in outbox.current.keys.sorted() { outbox.withdraw(id) }
        for (index, turn) in result.turns.enumerated() {
            outbox.publish(DiarizerTurn(id: Self.finalTurnIDBase + UInt64(index), speaker: Int32(clamping: labels[turn.cluster] ?? turn.cluster),
                                        startSeconds: turn.startSeconds, endSeconds: turn.endSeconds, confidence: turn.confidence))
        }
        var profiles: [Int32: (embedding: [Float], seconds: Double)] = [:]
        for (cluster, centroid) in result.centroids {
            profiles[Int32(clamping: labels[cluster] ?? cluster)] = centroid
        }
        finalProfiles = profiles
    }

    /// The final revision under other rules, for calibration sweeps: the stored windows re-clustered,
    /// nothing published. Call after `finalize`.
    public func reclustered(with other: OverlapDiarizerConfig) -> [DiarizerTurn] {
        let final = FinalReclustering(config: other, hint: hint, geometry: geometry, known: knownSpeakers)
        guard let result = final.run(windows: windows, totalSamples: totalSamples) else { return [] }
        return result.turns.enumerated().map { index, turn in
            DiarizerTurn(id: UInt64(index), speaker: Int32(clamping: turn.cluster), startSeconds: turn.startSeconds, endSeconds: turn.endSeconds,
                         confidence: turn.confidence)
        }
    }

    /// Final turn ids: far above the live ones.
    public static let finalTurnIDBase: UInt64 = 1 << 62

    /// A speaker's voice: the final cluster's centroid after finalize, the live centroid before.
    public func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        if let finalProfiles { return finalProfiles[speaker] }
        return clustering.embedding(of: speaker)
    }

    // MARK: One window

    private func analyseWindow(endingAt end: Int) throws {
        let start = max(0, end - windowSamples)
        guard end - start >= geometry.receptiveFieldSamples else { return }
        let activity = try buffer.withUnsafeBufferPointer { all in
            try segmenter.activity(UnsafeBufferPointer(rebasing: all[(start - bufferStartSample) ..< (end - bufferStartSample)]))
        }
        var window = AnalysedWindow(startSample: start, activity: activity)
        let predecessors = windows.last.map {
            window.predecessors(in: $0, geometry: geometry, threshold: config.activeProbability, minimumSeconds: Self.trackOverlapSeconds)
        } ?? [:]
        // Embeddings for local speakers that start a track, or whose track's embedding is old, in one batch.
        var requests: [(speaker: Int, audio: [Float])] = []
        let reembedSamples = Int(config.reembedSeconds * Double(sampleRate))
        let maximumSamples = Int(config.maximumEmbeddingSeconds * Double(sampleRate))
        for speaker in 0 ..< window.speakerCount {
            let active = window.activeFrames(of: speaker, threshold: config.activeProbability, clean: false)
            guard !active.isEmpty else { continue }
            if let previous = predecessors[speaker], let track = windows.last?.tracks[previous] {
                window.tracks[speaker] = track
            } else {
                window.tracks[speaker] = nextTrack
                lastEmbeddedSample[nextTrack] = nil
                nextTrack += 1
            }
            let clean = window.activeFrames(of: speaker, threshold: config.activeProbability, clean: true)
            window.cleanSeconds[speaker] = Double(clean.count) * geometry.frameSeconds
            let track = window.tracks[speaker]!
            if let last = lastEmbeddedSample[track], end - last < reembedSamples { continue }
            let frames = Double(clean.count) * geometry.frameSeconds >= config.minimumEmbeddingSeconds ? clean : active
            guard Double(frames.count) * geometry.frameSeconds >= config.minimumEmbeddingSeconds else { continue }
            var audio: [Float] = []
            for range in window.sampleRanges(of: frames, geometry: geometry) {
                let lower = max(range.lowerBound, start) - bufferStartSample
                let upper = min(range.upperBound, end) - bufferStartSample
                if upper > lower { audio.append(contentsOf: buffer[lower ..< upper]) }
            }
            // The latest speech: what the track has not been heard saying yet.
            if audio.count > maximumSamples { audio.removeFirst(audio.count - maximumSamples) }
            requests.append((speaker, audio))
            lastEmbeddedSample[track] = end
        }
        if !requests.isEmpty {
            let embeddings = try embedder.embed(requests.map(\.audio))
            for (request, embedding) in zip(requests, embeddings) { window.embeddings[request.speaker] = embedding }
        }
        assignLive(&window, predecessors: predecessors)
        publishLive(window, upTo: end)
        windows.append(window)
    }

    /// Shared active time that makes a local speaker the continuation of one in the previous window.
    static let trackOverlapSeconds = 0.2

    /// Local speakers embedded now are assigned by the clustering; the others keep the speaker their
    /// track had in the previous window. One to one either way.
    private func assignLive(_ window: inout AnalysedWindow, predecessors: [Int: Int]) {
        var inherited: [Int: Int32] = [:]
        if let previous = windows.last {
            for speaker in 0 ..< window.speakerCount where window.embeddings[speaker] == nil {
                if let before = predecessors[speaker], let global = previous.liveSpeakers[before] { inherited[speaker] = global }
            }
        }
        let locals = (0 ..< window.speakerCount).compactMap { speaker -> OnlineSpeakerClustering.Local? in
            guard let embedding = window.embeddings[speaker] else { return nil }
            return OnlineSpeakerClustering.Local(index: speaker, embedding: embedding, cleanSeconds: window.cleanSeconds[speaker])
        }
        window.liveSpeakers = clustering.assign(locals, config: config, forbidden: Set(inherited.values))
        for (speaker, global) in inherited { window.liveSpeakers[speaker] = global }
    }

    /// The window's part after the live frontier becomes turns (extending a speaker's open turn
    /// across a short gap).
    private func publishLive(_ window: AnalysedWindow, upTo end: Int) {
        let frontier = liveFrontierSample
        liveFrontierSample = end
        let half = geometry.shiftSamples / 2
        for (local, speaker) in window.liveSpeakers.sorted(by: { $0.key < $1.key }) {
            var runStart: Int?
            var runs: [Range<Int>] = []
            for frame in 0 ... window.frameCount {
                let centre = window.startSample + frame * geometry.shiftSamples + geometry.receptiveFieldSamples / 2
                let inside = frame < window.frameCount && centre >= frontier && centre < end
                    && window.isActive(frame: frame, speaker: local, threshold: config.activeProbability)
                if inside, runStart == nil { runStart = centre - half }
                if !inside, let started = runStart {
                    runs.append(started ..< min(end, centre - half))
                    runStart = nil
                }
            }
            for run in runs { extendOrOpen(speaker: speaker, samples: run) }
        }
    }

    private func extendOrOpen(speaker: Int32, samples: Range<Int>) {
        let start = Double(samples.lowerBound) / Double(sampleRate)
        let end = Double(samples.upperBound) / Double(sampleRate)
        if let id = openTurns[speaker], var turn = outbox.current[id], start - turn.endSeconds <= config.joinGapSeconds {
            turn.endSeconds = max(turn.endSeconds, end)
            outbox.publish(turn)
            return
        }
        let id = nextTurnID
        nextTurnID += 1
        openTurns[speaker] = id
        outbox.publish(DiarizerTurn(id: id, speaker: speaker, startSeconds: start, endSeconds: end, confidence: 0.8))
    }
}

/// Turns as stated now, and every change in order since the last pull (the plugin's
/// `PluginTurnOutbox` folds repeated changes of one id and drops withdrawals the host never saw).
struct TurnOutbox {
    private(set) var current: [UInt64: DiarizerTurn] = [:]
    private var changes: [DiarizerTurn] = []

    mutating func publish(_ turn: DiarizerTurn) {
        current[turn.id] = turn
        changes.append(turn)
    }

    mutating func withdraw(_ id: UInt64) {
        guard var turn = current.removeValue(forKey: id) else { return }
        turn.isRemoved = true
        changes.append(turn)
    }

    mutating func pull() -> [DiarizerTurn] {
        defer { changes.removeAll(keepingCapacity: true) }
        return changes
    }
}
