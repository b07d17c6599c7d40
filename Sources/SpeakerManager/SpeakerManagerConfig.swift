/// Tunables of streaming speaker tracking. The defaults are FluidAudio's `SpeakerManager` defaults.
///
/// Every threshold is a maximum cosine *distance* (1 − cosine similarity, 0 = same direction, 2 = opposite)
/// and is inclusive: a distance equal to the threshold passes.
public struct SpeakerManagerConfig: Sendable, Hashable, Codable {
    /// An embedding at most this far from its nearest speaker is assigned to that speaker; farther, it may
    /// start a new one. Lower values are stricter and create more speakers (typical 0.5–0.8).
    public var speakerThreshold: Float
    /// An assigned embedding at most this far from the speaker also refines the speaker's profile, so only
    /// confident matches move it. Normally below `speakerThreshold`.
    public var embeddingThreshold: Float
    /// A segment that matches nobody starts a new speaker only with at least this much speech, so brief
    /// fragments (coughs, back-channel "yeah") do not become speakers.
    public var minSpeechDurationSeconds: Double
    /// A matched segment refines the profile only with at least this much speech: short segments give
    /// noisy embeddings.
    public var minEmbeddingUpdateDurationSeconds: Double
    /// Weight of the existing profile in the exponential moving average
    /// `profile = normalize(alpha · profile + (1 − alpha) · segment)`; FluidAudio uses 0.9.
    public var embeddingUpdateAlpha: Float
    /// Raw segment embeddings kept per speaker (oldest dropped first). They let a profile be recomputed
    /// after a merge or a segment reassignment.
    public var rawEmbeddingHistoryLimit: Int
    /// Length every embedding must have (256 for WeSpeaker/GE2E-style models).
    public var embeddingDimension: Int

    public init(
        speakerThreshold: Float = 0.65,
        embeddingThreshold: Float = 0.45,
        minSpeechDurationSeconds: Double = 1.0,
        minEmbeddingUpdateDurationSeconds: Double = 2.0,
        embeddingUpdateAlpha: Float = 0.9,
        rawEmbeddingHistoryLimit: Int = 50,
        embeddingDimension: Int = 256
    ) {
        self.speakerThreshold = speakerThreshold
        self.embeddingThreshold = embeddingThreshold
        self.minSpeechDurationSeconds = minSpeechDurationSeconds
        self.minEmbeddingUpdateDurationSeconds = minEmbeddingUpdateDurationSeconds
        self.embeddingUpdateAlpha = embeddingUpdateAlpha
        self.rawEmbeddingHistoryLimit = rawEmbeddingHistoryLimit
        self.embeddingDimension = embeddingDimension
    }

    public static let `default` = SpeakerManagerConfig()

    /// Throws `invalidConfig` naming the first unusable field.
    public func validate() throws(SpeakerManagerError) {
        func fail(_ detail: String) -> SpeakerManagerError { SpeakerManagerError(.invalidConfig, detail) }
        guard speakerThreshold.isFinite, (0...2).contains(speakerThreshold) else {
            throw fail("speakerThreshold must be a cosine distance in 0...2, got \(speakerThreshold)")
        }
        guard embeddingThreshold.isFinite, (0...2).contains(embeddingThreshold) else {
            throw fail("embeddingThreshold must be a cosine distance in 0...2, got \(embeddingThreshold)")
        }
        guard minSpeechDurationSeconds.isFinite, minSpeechDurationSeconds >= 0 else {
            throw fail("minSpeechDurationSeconds must be finite and >= 0, got \(minSpeechDurationSeconds)")
        }
        guard minEmbeddingUpdateDurationSeconds.isFinite, minEmbeddingUpdateDurationSeconds >= 0 else {
            throw fail(
                "minEmbeddingUpdateDurationSeconds must be finite and >= 0, got \(minEmbeddingUpdateDurationSeconds)")
        }
        guard embeddingUpdateAlpha.isFinite, (0...1).contains(embeddingUpdateAlpha) else {
            throw fail("embeddingUpdateAlpha must be in 0...1, got \(embeddingUpdateAlpha)")
        }
        guard rawEmbeddingHistoryLimit >= 0 else {
            throw fail("rawEmbeddingHistoryLimit must be >= 0, got \(rawEmbeddingHistoryLimit)")
        }
        guard embeddingDimension > 0 else {
            throw fail("embeddingDimension must be > 0, got \(embeddingDimension)")
        }
    }
}
