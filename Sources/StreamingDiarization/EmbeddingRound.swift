/// The windows one push of a `StreamingDiarizer` needs embedded before it can label its frames
/// (`pushDeferringEmbeddings`), and where each embedding goes back (`complete`). Holding it is
/// holding the diarizer's next step: complete it before pushing that diarizer again.
public struct EmbeddingRound: Sendable {
    /// The audio of each window, in order (16 kHz mono, 0.4 s and up).
    public internal(set) var windows: [[Float]] = []
    /// Region and frame each window's embedding labels.
    var slots: [(region: Int, frame: Int)] = []
}
