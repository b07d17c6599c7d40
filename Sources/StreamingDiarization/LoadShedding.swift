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

        /// Half the embeddings from 0.1 s behind, a quarter from 0.25 s, an eighth from 0.5 s (each
        /// scaled per session: `thresholdScale`); back one step after 2 s of audio under 0.05 s. Set
        /// from the label budget, not from accuracy: issue 31 asks for label p95 within 300 ms, and an
        /// unloaded server already spends about 220 ms of it (`sessions --levels 10`: 219 ms), so a
        /// push that waited 0.1 s is where a label starts to be late. Final labels do not depend on it
        /// (finalize embeds the kept windows). Label p95 at 100 sessions on two cores, one run each:
        /// steps from 1 s, 1.17 s; from 0.25 s, 0.58 s; from 0.1 s with the spread, 0.32–0.52 s over
        /// six runs (docs/benchmarks.md, "Load shedding on by default").
        public static let `default` = Config(steps: [(0.1, 2), (0.25, 4), (0.5, 8)], recoveredBacklogSeconds: 0.05, recoverAfterSeconds: 2)
    }

    public let config: Config
    public private(set) var stride = 1
    /// Audio seen since the backlog last fell below `recoveredBacklogSeconds` (while shedding).
    private var calmSeconds = 0.0

    /// This session's thresholds are the config's times this, from 0.5 to 1.5 (`spread`).
    public let thresholdScale: Double

    /// `spread` in [0, 1) places this session among the others (a hash of its id): its thresholds are
    /// the config's scaled from 0.5× to 1.5×. Why: the backlog is the worker's, one figure for all its
    /// sessions, so with equal thresholds every session shed and recovered at the same push, and the
    /// worker swung between all and nothing (at 100 sessions, 100 sessions changing stride within
    /// one second, every 2 s: the bursts in between are late labels). Spread out, the work shed grows
    /// with the backlog a session at a time, and the backlog settles where enough of them shed.
    public init(config: Config = .default, spread: Double = 0.5) {
        self.config = config
        thresholdScale = 0.5 + min(max(spread, 0), 1)
    }

    /// A stable spread for a session id, so a replay sheds the same way: FNV-1a of its bytes, then
    /// MurmurHash3's 64-bit finalizer (FNV's high bits alone barely move between ids that differ in a
    /// last character, and the spread is read from the high bits).
    public static func spread(forSessionID id: String) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return Double(hash >> 11) / Double(UInt64(1) << 53)
    }

    /// The stride for the next push, given how long it waited and how much audio it holds.
    public mutating func update(backlogSeconds: Double, audioSeconds: Double) -> Int {
        let scaled = backlogSeconds / thresholdScale
        let wanted = config.steps.last { scaled >= $0.backlogSeconds }?.stride ?? 1
        if wanted > stride {
            stride = wanted
            calmSeconds = 0
        } else if stride > 1, scaled < config.recoveredBacklogSeconds {
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
