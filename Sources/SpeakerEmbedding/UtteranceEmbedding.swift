/// `SpeakerEncoder.embedUtterance`'s result: the utterance embedding and the partials it averages.
public struct UtteranceEmbedding: Sendable, Equatable {
    /// Mean of the partial embeddings, L2-normalised (256 values).
    public var embedding: [Float]
    /// One embedding per 1.6 s partial window, in time order.
    public var partialEmbeddings: [[Float]]
    /// Each partial's samples; the last may run past the audio, which was zero-padded to reach it.
    public var partialSampleRanges: [Range<Int>]
}
