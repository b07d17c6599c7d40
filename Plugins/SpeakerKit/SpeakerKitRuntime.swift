import ProviderPluginKit
import Foundation
import Logging
import DiarizationModels
import SpeakerEmbedding
import VoiceActivity

/// What every speakerkit session shares, made once in init(): the host's log and backlog, the GE2E
/// encoder (5.7 MB of weights, immutable, safe from every session queue at once) and the VAD detectors.
final class SpeakerKitRuntime: Sendable {
    let logger: Logger
    let encoder: SpeakerEncoder
    let detectors: SpeechDetectorPool
    /// How long the push now starting waited in the host's queues (ABI revision 5; 0 from older hosts).
    let backlogSeconds: @Sendable () -> Double
    /// The overlap pass's segmentation model (pyannote segmentation-3.0), nil when vendor/ lacks it.
    let segmenter: PyannoteSegmenter?
    /// Runs every session's overlap segmentation off the push path, below the sessions' priority.
    let overlapWorker = LowPriorityWorker(name: "speakerkit-overlap")

    init(logger: Logger, backlogSeconds: @escaping @Sendable () -> Double = { 0 }) throws {
        self.logger = logger
        self.backlogSeconds = backlogSeconds
        encoder = try SpeakerEncoder(logger: logger)
        detectors = try SpeechDetectorPool(logger: logger)
        segmenter = PyannoteSegmenter.vendored()
        if segmenter == nil {
            logger.warning("no pyannote segmentation model in vendor/models: speakerkit runs without its overlap pass (run scripts/setup)")
        }
    }
}
