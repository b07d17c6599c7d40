import DiarizationModels
import Logging
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// speakerkit's diarizer on the real models, as the tests of this target build it: silero VAD, the
/// default configuration, and the embedder under test (GE2E, or GE2E wrapped).
func makeSpeakerKitDiarizer(embedder: any SpeakerEmbedder, logger: Logger) throws -> StreamingDiarizer {
    StreamingDiarizer(config: .default, detector: SileroSpeechDetector(detector: try SileroVoiceActivityDetector(config: .default, logger: logger)),
                      embedder: embedder, speakers: try SpeakerManager(config: DiarizerConfig.default.speakerManagerConfig, logger: logger),
                      logger: logger)
}
