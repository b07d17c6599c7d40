import ProviderPluginKit
import DiarizationModels
import Foundation
import Logging
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// One speakerkit instance: a `StreamingDiarizer` behind the C instance table (ProviderPluginKit's).
/// Driven from one session queue (the ABI's rule), so no locking inside.
final class SpeakerKitSession: PluginProviderSession {
    let diarizer: StreamingDiarizer
    let sessionID: String
    /// Given back to the runtime's pool when the session ends.
    let detector: SileroVoiceActivityDetector
    private let runtime: SpeakerKitRuntime
    let logger: Logger
    /// The embedding stride from the host's backlog: labels on time at a coarser grain when the worker
    /// cannot keep up (docs/benchmarks.md, "Load shedding").
    private var shedding = LoadShedding()

    init(runtime: SpeakerKitRuntime, embedder: any SpeakerEmbedder, options: DiarizerOptions, known: [Speaker], sessionID: String) throws {
        self.sessionID = sessionID
        var logger = runtime.logger
        logger[metadataKey: "session"] = "\(sessionID)"
        self.logger = logger
        var managerConfig = options.config.speakerManagerConfig
        managerConfig.embeddingDimension = embedder.dimension
        let speakers = try SpeakerManager(config: managerConfig, logger: logger)
        if !known.isEmpty { try speakers.initializeKnownSpeakers(known, mode: .overwrite, preserveIfPermanent: false) }
        self.runtime = runtime
        detector = try runtime.detectors.take()
        diarizer = StreamingDiarizer(
            config: options.config, hint: options.hint, detector: SileroSpeechDetector(detector: detector),
            embedder: embedder, speakers: speakers, logger: logger)
    }

    deinit {
        runtime.detectors.giveBack(detector)
    }

    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) {
        adjustStride(forPushOf: samples.count)
        do {
            try diarizer.push(Array(samples))
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
    }

    /// Load shedding's step for the push of `sampleCount` samples now starting.
    func adjustStride(forPushOf sampleCount: Int) {
        let backlog = runtime.backlogSeconds()
        let stride = shedding.update(backlogSeconds: backlog, audioSeconds: Double(sampleCount) / 16_000)
        if stride != diarizer.embeddingStride {
            logger.info(stride > diarizer.embeddingStride ? "behind: embedding fewer frames" : "catching up: embedding more frames", metadata: [
                "embedding_stride": "\(stride)", "backlog_seconds": "\(String(format: "%.2f", backlog))",
            ])
            diarizer.embeddingStride = stride
        }
    }

    func pullTurns() -> [PluginTurn] {
        diarizer.pullTurns().map {
            PluginTurn(id: $0.id, speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds,
                       confidence: $0.confidence, isRemoved: $0.isRemoved)
        }
    }

    func finalize() throws(PluginFailure) {
        do {
            try diarizer.finalize()
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
        logger.debug("finalized", metadata: [
            "speakers": "\(diarizer.speakersWithTurns.count)", "embedded_frames": "\(diarizer.embeddedFrameCount)",
            "shed_frames": "\(diarizer.shedFrameCount)",
        ])
    }

    func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        diarizer.profile(of: speaker)
    }
}
