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

    /// The speech in a recording, for enrolment; refuses less than a second of it.
    func speech(in samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        let speech: [Float]
        do {
            speech = try detectors.speech(in: samples)
        } catch {
            throw PluginFailure(.internalError, "embed_voice: \(error)")
        }
        guard Double(speech.count) / 16_000 >= 1.0 else {
            throw PluginFailure(.invalidArgument, String(format: "embed_voice: %.1f s of speech found; at least 1 s is needed (3 to 10 s works best)", Double(speech.count) / 16_000))
        }
        return speech
    }
}
