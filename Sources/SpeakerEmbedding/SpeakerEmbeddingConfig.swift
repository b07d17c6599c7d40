import Foundation

/// How `SpeakerEncoder` finds its weights and cuts audio. The defaults reproduce resemblyzer 0.1.4's
/// `preprocess_wav` (without its VAD trimming) and `embed_utterance`.
public struct SpeakerEmbeddingConfig: Sendable, Equatable {
    /// The converted weights (ge2e.bin). nil: `GE2EModelLocator` searches SPEAKERSYNC_MODELS, then a
    /// `vendor/models` folder above the executable or the current directory.
    public var modelPath: URL?
    /// Raise quiet input to `targetLevelDBFS` before the mel front end (never lowers loud input), as
    /// resemblyzer's preprocessing did for the audio the encoder was trained on.
    public var normalizesVolume: Bool
    /// The RMS level, in dB relative to int16 full scale, quiet input is raised to.
    public var targetLevelDBFS: Double
    /// Partial windows per second of audio in `embedUtterance` (resemblyzer's `rate`).
    public var partialsPerSecond: Double
    /// The fraction of a 1.6 s partial that real audio must fill for the utterance's last, zero-padded
    /// partial to be kept (resemblyzer's `min_coverage`).
    public var minimumCoverage: Double
    /// Windows run through the network together: larger batches make the recurrent matrix products
    /// faster per window, at 160 × batch × 4 KiB of gate scratch.
    public var maximumBatchSize: Int

    public init(
        modelPath: URL? = nil, normalizesVolume: Bool = true, targetLevelDBFS: Double = -30,
        partialsPerSecond: Double = 1.3, minimumCoverage: Double = 0.75, maximumBatchSize: Int = 16
    ) {
        self.modelPath = modelPath
        self.normalizesVolume = normalizesVolume
        self.targetLevelDBFS = targetLevelDBFS
        self.partialsPerSecond = partialsPerSecond
        self.minimumCoverage = minimumCoverage
        self.maximumBatchSize = maximumBatchSize
    }

    public static let `default` = SpeakerEmbeddingConfig()
}
