import DiarizationModels
import Foundation
import Logging
import ProviderPluginKit
import SherpaOnnxSpeakers
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// One `sherpa-onnx` session. Live: a `StreamingDiarizer` on the silero VAD and the configured
/// embedding model. At finalize: sherpa-onnx's offline diarization over the whole session (kept in a
/// `SessionAudioStore`), whose speakers take the live labels they overlap most (`SpeakerRelabelling`),
/// so "Speaker 1" stays the same person; its turns replace the live ones and may overlap each other.
/// If the offline pass fails or finds no speech where the live turns found some, the live result
/// stands: finalize never leaves the session with fewer labelled words than it had.
///
/// Called on the session's queue only (the ABI's rule): no locking inside.
final class SherpaOnnxSession: PluginProviderSession {
    /// Offline turn ids: far above the live diarizer's (region serial << 32 | frame).
    static let offlineTurnIDBase: UInt64 = 1 << 62

    let sessionID: String
    let logger: Logger
    private let diarizer: StreamingDiarizer
    private let detector: SileroVoiceActivityDetector
    private let detectors: SpeechDetectorPool
    private let extractor: SpeakerEmbeddingExtractor
    private let offline: OfflineDiarizerPool
    private let audio = SessionAudioStore()
    private let hint: SpeakerCountHint
    private let clustering: OfflineSpeakerDiarizer.Clustering
    private let runsOfflinePass: Bool
    /// Keep the live result when the offline pass finds fewer speakers than it (`prefer_live_count`).
    private let prefersLiveCount: Bool
    static let prefersLiveCountByDefault = 1.0
    /// Sessions longer than this keep the live result (`offline_max_seconds`): 15 minutes, whose pass
    /// takes about 70 s here, within the host's 120 s finalize deadline with room for a busy machine.
    private let offlineMaximumSeconds: Double
    static let offlineMaximumSecondsByDefault = 900.0
    private let knownSpeakers: Set<Int>

    /// The turns as this session states them, and what the host has not pulled yet.
    private var outbox = PluginTurnOutbox()
    /// After a successful offline pass: its segments with final labels, for profiles.
    private var offlineSegments: [(speaker: Int32, startSeconds: Double, endSeconds: Double)]?
    private var profiles: [Int32: (embedding: [Float], seconds: Double)?] = [:]
    private var isFinalized = false

    init(sessionID: String, options: DiarizerOptions, offlineThreshold: Double, known: [Speaker], extractor: SpeakerEmbeddingExtractor,
         offline: OfflineDiarizerPool, detectors: SpeechDetectorPool, logger: Logger) throws {
        self.sessionID = sessionID
        var logger = logger
        logger[metadataKey: "session"] = "\(sessionID)"
        self.logger = logger
        self.extractor = extractor
        self.offline = offline
        self.detectors = detectors
        hint = options.hint
        clustering = OfflineSpeakerDiarizer.Clustering(
            speakerCount: options.hint.exact, distanceThreshold: options.extra["offline_threshold"] ?? offlineThreshold,
            minimumSegmentSeconds: options.extra["min_segment_seconds"] ?? OfflineSpeakerDiarizer.Clustering.default.minimumSegmentSeconds,
            mergeGapSeconds: options.extra["merge_gap_seconds"] ?? OfflineSpeakerDiarizer.Clustering.default.mergeGapSeconds)
        runsOfflinePass = (options.extra["offline_pass"] ?? 1) != 0
        prefersLiveCount = (options.extra["prefer_live_count"] ?? Self.prefersLiveCountByDefault) != 0
        offlineMaximumSeconds = options.extra["offline_max_seconds"] ?? Self.offlineMaximumSecondsByDefault
        knownSpeakers = Set(known.compactMap { Int($0.id) })
        var managerConfig = options.config.speakerManagerConfig
        managerConfig.embeddingDimension = extractor.dimension
        let speakers = try SpeakerManager(config: managerConfig, logger: logger)
        if !known.isEmpty { try speakers.initializeKnownSpeakers(known, mode: .overwrite, preserveIfPermanent: false) }
        detector = try detectors.take()
        diarizer = StreamingDiarizer(
            config: options.config, hint: options.hint, detector: SileroSpeechDetector(detector: detector),
            embedder: SherpaOnnxEmbedder(extractor: extractor), speakers: speakers, logger: logger)
    }

    deinit {
        detectors.giveBack(detector)
    }

    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) {
        guard !isFinalized else { throw PluginFailure(.badState, "push after finalize") }
        do {
            try audio.append(samples)
            try diarizer.push(Array(samples))
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
    }

    func pullTurns() -> [PluginTurn] {
        takeLiveTurns()
        return outbox.pull()
    }

    func finalize() throws(PluginFailure) {
        guard !isFinalized else { return }
        isFinalized = true
        do {
            try diarizer.finalize()
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
        takeLiveTurns()
        guard runsOfflinePass, audio.sampleCount >= 16_000 else { return }
        // The pass costs about 0.08 s per audio second here (docs/accuracy.md); past the limit it would
        // outrun the host's finalize deadline (120 s by default), and the live result stands instead.
        let seconds = Double(audio.sampleCount) / 16_000
        guard seconds <= offlineMaximumSeconds else {
            logger.info("session longer than offline_max_seconds; keeping the live turns",
                        metadata: ["seconds": "\(Int(seconds))", "offline_max_seconds": "\(Int(offlineMaximumSeconds))"])
            return
        }
        let started = ContinuousClock.now
        let segments: [OfflineSpeakerDiarizer.Segment]
        do {
            segments = try offlineSegments(clustering)
        } catch {
            // The live turns stand; the session is not failed for a revision it could not make.
            logger.warning("offline pass failed; keeping the live turns", metadata: ["error": "\(error)"])
            return
        }
        guard !segments.isEmpty || outbox.current.isEmpty else {
            logger.warning("offline pass found no speech where the live turns found some; keeping the live turns")
            return
        }
        let liveCount = Set(outbox.current.values.map(\.speaker)).count
        let offlineCount = Set(segments.map(\.speaker)).count
        if prefersLiveCount, hint.exact == nil, offlineCount < liveCount {
            // pyannote's segmentation can fold two voices into one local speaker (it did on synthetic
            // voices); the live diarizer's finalize counts voices over the whole session by embedding.
            logger.info("offline pass found fewer speakers than the live result; keeping the live turns",
                        metadata: ["offline_speakers": "\(offlineCount)", "live_speakers": "\(liveCount)"])
            return
        }
        replaceLiveTurns(with: segments)
        logger.debug("offline pass", metadata: [
            "seconds": "\(Double(audio.sampleCount) / 16_000)", "segments": "\(segments.count)",
            "speakers": "\(Set(segments.map(\.speaker)).count)", "took": "\(ContinuousClock.now - started)",
        ])
    }

    func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        guard let segments = offlineSegments else { return diarizer.profile(of: speaker) }
        if let cached = profiles[speaker] { return cached }
        let profile = offlineProfile(of: speaker, segments: segments) ?? diarizer.profile(of: speaker)
        profiles[speaker] = profile
        return profile
    }

    // MARK: Live

    private func takeLiveTurns() {
        for turn in diarizer.pullTurns() {
            publish(PluginTurn(id: turn.id, speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds,
                               confidence: turn.confidence, isRemoved: turn.isRemoved))
        }
    }

    private func publish(_ turn: PluginTurn) {
        outbox.publish(turn)
    }

    // MARK: Offline

    /// The offline pass, with the count hints sherpa-onnx's clustering cannot take directly: a
    /// threshold run whose count falls outside min/max_speakers is re-run with the nearest bound.
    private func offlineSegments(_ clustering: OfflineSpeakerDiarizer.Clustering) throws -> [OfflineSpeakerDiarizer.Segment] {
        var segments = try audio.withSamples { samples in try offline.process(samples, clustering: clustering) }
        guard clustering.speakerCount == nil else { return segments }
        let count = Set(segments.map(\.speaker)).count
        var bounded = clustering
        if let maximum = hint.maximum, count > maximum {
            bounded.speakerCount = maximum
        } else if let minimum = hint.minimum, count < minimum, count > 0 {
            bounded.speakerCount = minimum
        }
        if bounded.speakerCount != nil {
            segments = try audio.withSamples { samples in try offline.process(samples, clustering: bounded) }
        }
        return segments
    }

    /// The offline segments become the session's turns, labelled by overlap with the live turns.
    private func replaceLiveTurns(with segments: [OfflineSpeakerDiarizer.Segment]) {
        let earlier = outbox.current.values.map { SpeakerRelabelling.Span(speaker: Int($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let new = segments.map { SpeakerRelabelling.Span(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let labels = SpeakerRelabelling.labels(for: new, earlier: earlier, reserved: knownSpeakers)
        for id in outbox.current.keys.sorted() { outbox.withdraw(id) }
        var labelled: [(speaker: Int32, startSeconds: Double, endSeconds: Double)] = []
        for (index, segment) in segments.enumerated() {
            let speaker = Int32(clamping: labels[segment.speaker] ?? segment.speaker)
            // sherpa-onnx's confidence is a cosine similarity to the speaker's centre; a turn's is in [0, 1].
            let confidence = Float(max(0, min(1, segment.confidence ?? 0.8)))
            publish(PluginTurn(id: Self.offlineTurnIDBase + UInt64(index), speaker: speaker, startSeconds: segment.startSeconds,
                               endSeconds: segment.endSeconds, confidence: confidence))
            labelled.append((speaker, segment.startSeconds, segment.endSeconds))
        }
        offlineSegments = labelled
    }

    /// A speaker's profile from the offline pass: the duration-weighted mean embedding of their longest
    /// segments (up to 30 s of speech), each embedded alone.
    private func offlineProfile(of speaker: Int32, segments: [(speaker: Int32, startSeconds: Double, endSeconds: Double)]) -> (embedding: [Float], seconds: Double)? {
        let theirs = segments.filter { $0.speaker == speaker && $0.endSeconds - $0.startSeconds >= 0.5 }
            .sorted { $0.endSeconds - $0.startSeconds > $1.endSeconds - $1.startSeconds }
        var sum: [Float] = []
        var seconds = 0.0
        for segment in theirs where seconds < 30 {
            let range = Int(segment.startSeconds * 16_000) ..< Int(segment.endSeconds * 16_000)
            guard let samples = try? audio.samples(in: range), let embedding = try? extractor.embed(samples) else { continue }
            let weight = Float(segment.endSeconds - segment.startSeconds)
            let norm = max(1e-12, sqrt(embedding.reduce(0) { $0 + $1 * $1 }))
            if sum.isEmpty { sum = [Float](repeating: 0, count: embedding.count) }
            for i in sum.indices { sum[i] += weight * embedding[i] / norm }
            seconds += Double(weight)
        }
        guard !sum.isEmpty else { return nil }
        let norm = max(1e-12, sqrt(sum.reduce(0) { $0 + $1 * $1 }))
        return (sum.map { $0 / norm }, seconds)
    }
}
