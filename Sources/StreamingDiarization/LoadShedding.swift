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

        /// Half the embeddings from a second behind, a quarter from 2.5 s: speakerkit's first label
        /// comes about a second after its audio anyway, so a second's wait is where lag begins.
        public static let `default` = Config(steps: [(1.0, 2), (2.5, 4)], recoveredBacklogSeconds: 0.3, recoverAfterSeconds: 2)
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
