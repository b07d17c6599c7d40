/// How much of its work a provider sheds when the host cannot keep up: from how long pushes wait for
/// it (the host's backlog), the embedding stride (`StreamingDiarizer.embeddingStride`). Pure.
///
/// Why a stride: under overload a session's pushes queue up and its labels arrive ever later — 32 s
/// p95 at 100 speakerkit sessions on two cores (docs/benchmarks.md). Embedding is most of the
/// pipeline's cost, and a frame without an embedding is labelled from its neighbours, so a wider stride
/// gives labels on time at a coarser grain: a degraded answer now instead of a full one too late.
/// Escalates at once, recovers one step at a time once the backlog is gone for `recoverAfterSeconds`
/// of audio, so that a short lull does not bring the full load straight back.
public struct LoadShedding: Sendable {
    public struct Config: Sendable {
        /// Backlog (seconds a push waited) from which each stride applies, in increasing order.
        public var steps: [(backlogSeconds: Double, stride: Int)]
        /// Below this backlog the host is keeping up.
        public var recoveredBacklogSeconds: Double
        /// Audio the backlog must stay low for before the stride steps down one level.
        public var recoverAfterSeconds: Double

        public init(steps: [(backlogSeconds: Double, stride: Int)], recoveredBacklogSeconds: Double, recoverAfterSeconds: Double) {
            self.steps = steps
            self.recoveredBacklogSeconds = recoveredBacklogSeconds
            self.recoverAfterSeconds = recoverAfterSeconds
        }

        /// Half the embeddings from 0.1 s behind, a quarter from 0.25 s, an eighth from 0.5 s; back one
        /// step after 2 s of audio under 0.05 s. Set from the label budget, not from accuracy: issue 31
        /// asks for label p95 within 300 ms, and an unloaded server already spends about 220 ms of it
        /// (`sessions --levels 10`: 219 ms), so a push that waited 0.1 s is where a label starts to be
        /// late. Final labels do not depend on it (finalize embeds the kept windows). Measured at 100
        /// sessions on two cores: steps from 1 s, 1.17 s p95; from 0.25 s, 0.58 s; from 0.1 s, 0.34 s
        /// (docs/benchmarks.md, "Load shedding on by default").
        public static let `default` = Config(steps: [(0.1, 2), (0.25, 4), (0.5, 8)], recoveredBacklogSeconds: 0.05, recoverAfterSeconds: 2)
    }

    public let config: Config
    public private(set) var stride = 1
    /// Audio seen since the backlog last fell below `recoveredBacklogSeconds` (while shedding).
    private var calmSeconds = 0.0

    public init(config: Config = .default) {
        self.config = config
    }

    /// The stride for the next push, given how long it waited and how much audio it holds.
    public mutating func update(backlogSeconds: Double, audioSeconds: Double) -> Int {
        let wanted = config.steps.last { backlogSeconds >= $0.backlogSeconds }?.stride ?? 1
        if wanted > stride {
            stride = wanted
            calmSeconds = 0
        } else if stride > 1, backlogSeconds < config.recoveredBacklogSeconds {
            calmSeconds += audioSeconds
            if calmSeconds >= config.recoverAfterSeconds {
                stride = config.steps.last { $0.stride < stride }?.stride ?? 1
                calmSeconds = 0
            }
        } else {
            calmSeconds = 0
        }
        return stride
    }
}
