/// The rules of the overlap-aware pipeline (`OverlapDiarizer`). Distances are cosine distances
/// (1 − cosine similarity) between speaker embeddings, so they depend on the embedding model: each
/// model gets its own values, calibrated on calibration meetings only (docs/accuracy.md says which).
public struct OverlapDiarizerConfig: Sendable, Equatable {
    /// The segmentation window (diart and pyannote use 5 s and 10 s; the model was trained on 10 s).
    public var windowSeconds: Double
    /// A new window every `stepSeconds`; its newest step is published live. First labels arrive within
    /// about a step of the audio, and the segmentation runs window/step times over every second.
    public var stepSeconds: Double
    /// A local speaker is talking in a frame when the model's probability reaches this.
    public var activeProbability: Float
    /// Speech a local speaker needs in a window (alone, or with overlap when alone is shorter) for an
    /// embedding; shorter voices follow the local speaker they continue from the previous window.
    public var minimumEmbeddingSeconds: Double
    /// A local speaker that continues one of the previous window (a track) is embedded again only
    /// when its track's last embedding is this old; in between it keeps its track's speaker. CAM++
    /// costs about 20 ms of CPU per second of audio it embeds, so this sets most of the pipeline's cost.
    public var reembedSeconds: Double
    /// At most this much of a local speaker's speech (the latest) goes into one embedding.
    public var maximumEmbeddingSeconds: Double
    /// Speech alone in the window a local speaker needs to move its global speaker's centroid (diart's rho_update).
    public var updateSeconds: Double
    /// Live: a local speaker further than this from every global speaker is a new speaker (diart's delta_new).
    public var newSpeakerDistance: Float
    /// Finalize: clusters of window embeddings merge while their average distance is below this.
    public var finalDistance: Float
    /// Finalize: a cluster with less speech than this joins its nearest larger cluster (pyannote's min_cluster_size).
    public var minimumClusterSeconds: Double
    /// Live: a known (enrolled) speaker takes a local speaker this close to their voice.
    public var enrolledDistance: Float
    /// Turns of one speaker separated by a gap shorter than this are joined.
    public var joinGapSeconds: Double
    /// Turns shorter than this are dropped (a frame or two of noise).
    public var minimumTurnSeconds: Double
    /// At most this many speakers live.
    public var maximumSpeakers: Int
    /// Sessions longer than this keep their live labels at finalize (the re-clustering is quadratic in windows).
    public var finalMaximumSeconds: Double

    public init(windowSeconds: Double, stepSeconds: Double, activeProbability: Float, minimumEmbeddingSeconds: Double,
                reembedSeconds: Double, maximumEmbeddingSeconds: Double, updateSeconds: Double, newSpeakerDistance: Float, finalDistance: Float, minimumClusterSeconds: Double,
                enrolledDistance: Float, joinGapSeconds: Double, minimumTurnSeconds: Double, maximumSpeakers: Int,
                finalMaximumSeconds: Double) {
        self.windowSeconds = windowSeconds
        self.stepSeconds = stepSeconds
        self.activeProbability = activeProbability
        self.minimumEmbeddingSeconds = minimumEmbeddingSeconds
        self.reembedSeconds = reembedSeconds
        self.maximumEmbeddingSeconds = maximumEmbeddingSeconds
        self.updateSeconds = updateSeconds
        self.newSpeakerDistance = newSpeakerDistance
        self.finalDistance = finalDistance
        self.minimumClusterSeconds = minimumClusterSeconds
        self.enrolledDistance = enrolledDistance
        self.joinGapSeconds = joinGapSeconds
        self.minimumTurnSeconds = minimumTurnSeconds
        self.maximumSpeakers = maximumSpeakers
        self.finalMaximumSeconds = finalMaximumSeconds
    }

    /// The shape of the pipeline with distances left at generic margin-loss values (0.6 / 0.5 / 0.4);
    /// a provider overrides the distances with its embedding model's calibrated ones.
    public static let `default` = OverlapDiarizerConfig(
        windowSeconds: 5, stepSeconds: 1, activeProbability: 0.5, minimumEmbeddingSeconds: 0.4,
        reembedSeconds: 2, maximumEmbeddingSeconds: 3, updateSeconds: 1.0,
        newSpeakerDistance: 0.6, finalDistance: 0.5, minimumClusterSeconds: 2.0, enrolledDistance: 0.4,
        joinGapSeconds: 0.1, minimumTurnSeconds: 0.05, maximumSpeakers: 20, finalMaximumSeconds: 3_600)
}
