import SpeakerManager
import StreamingDiarization

extension DiarizerConfig {
    /// The SpeakerManager configuration that goes with this diarizer configuration (speakerkit's, and
    /// the benchmarks'): the online thresholds come from the diarizer config, so one knob moves both.
    public var speakerManagerConfig: SpeakerManagerConfig {
        var manager = SpeakerManagerConfig.default
        manager.speakerThreshold = speakerThreshold
        manager.embeddingThreshold = embeddingThreshold
        manager.minSpeechDurationSeconds = minNewSpeakerSeconds
        // Frames embed windows of `windowSeconds`: let confident ones refine the profile.
        manager.minEmbeddingUpdateDurationSeconds = min(1.0, windowSeconds * 0.66)
        return manager
    }
}
