import ProviderPluginKit
import Foundation
import Logging
import DiarizationModels
import SpeakerEmbedding
import VoiceActivity

/// What every speakerkit session shares, made once in init(): the host's log, the GE2E encoder (5.7 MB
/// of weights, immutable, safe from every session queue at once) and the VAD detectors.
final class SpeakerKitRuntime: Sendable {
    let logger: Logger
    let encoder: SpeakerEncoder
    let detectors: SpeechDetectorPool

    init(logger: Logger) throws {
        self.logger = logger
        encoder = try SpeakerEncoder(logger: logger)
        detectors = try SpeechDetectorPool(logger: logger)
    }
}
