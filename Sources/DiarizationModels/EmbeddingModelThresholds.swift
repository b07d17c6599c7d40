import StreamingDiarization

/// The live diarizer's thresholds for a sherpa-onnx embedding model (3D-Speaker, WeSpeaker, NeMo), used
/// by `sherpa-onnx` and by `speakerkit.NAME`: what the operator calibrated for the model
/// (`speakersync-bench calibrate` prints them for the provider config), else defaults for embeddings
/// trained with a margin loss, whose different voices sit much farther apart than GE2E's (its different
/// voices are at cosine distance 0.07-0.09, docs/accuracy.md).
public enum EmbeddingModelThresholds {
    /// Cosine distances. speaker/embedding/cluster/enrolled: the diarizer's (new speaker, profile update,
    /// finalize merge, enrolled name check); offline: sherpa-onnx's offline clustering.
    public static let marginLossDefaults: [String: Double] = [
        "speaker": 0.6, "embedding": 0.4, "cluster": 0.5, "enrolled": 0.35, "offline": 0.5,
    ]


    public static func value(_ name: String, in thresholds: [String: Double]) -> Double {
        thresholds[name] ?? marginLossDefaults[name]!
    }

    /// The diarizer's config with the model's thresholds in place of GE2E's.
    public static func diarizerConfig(_ thresholds: [String: Double]) -> DiarizerConfig {
        var config = DiarizerConfig.default
        config.speakerThreshold = Float(value("speaker", in: thresholds))
        config.embeddingThreshold = Float(value("embedding", in: thresholds))
        config.clusterThreshold = Float(value("cluster", in: thresholds))
        config.enrolledSpeakerThreshold = Float(value("enrolled", in: thresholds))
        // The finalize's cost of a change of speaker is in distance units too; without a calibrated one,
        // speakerkit's (tuned for GE2E) stands.
        if let penalty = thresholds["switch_penalty"] { config.switchPenalty = Float(penalty) }
        // The same for the margin a voice the count missed must clear to be split off.
        if let margin = thresholds["uncounted_voice_margin"] { config.uncountedVoiceMargin = Float(margin) }
        return config
    }
}
