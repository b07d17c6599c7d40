import SpeakerManager
import StreamingDiarization

/// speakerkit's tuned defaults (GE2E embeddings; tuned with `speakersync eval` on ami-dev, see docs/accuracy.md).
enum SpeakerKitDefaults {
    static let diarizer = DiarizerConfig.default

    static func manager(for config: DiarizerConfig) -> SpeakerManagerConfig {
        var manager = SpeakerManagerConfig.default
        manager.speakerThreshold = config.speakerThreshold
        manager.embeddingThreshold = config.embeddingThreshold
        manager.minSpeechDurationSeconds = config.minNewSpeakerSeconds
        // Frames embed 1.5 s windows: let confident ones refine the profile.
        manager.minEmbeddingUpdateDurationSeconds = min(1.0, config.windowSeconds * 0.66)
        return manager
    }
}
