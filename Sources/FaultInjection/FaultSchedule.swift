import DeterministicRandom

/// One thing a fault run does to the system while devices stream.
public enum Fault: String, CaseIterable, Sendable, Hashable {
    /// Every client connection cut at once through the TCP proxy (a tunnel, a Wi-Fi handover).
    case networkCut = "network_cut"
    /// PostgreSQL stopped (fast shutdown) for `holdSeconds`, then started again.
    case postgresStop = "postgres_stop"
    /// PostgreSQL SIGSTOPped (connections open, nothing answers) for `holdSeconds`.
    case postgresFreeze = "postgres_freeze"
    /// A provider worker SIGKILLed (its sessions fail with provider_failed and resume).
    case workerKill = "worker_kill"
    /// The server SIGKILLed and started again.
    case serverKill = "server_kill"
    /// The server SIGTERMed (an orderly stop) and started again.
    case serverTerm = "server_term"
    /// A client that sends as fast as it can and never reads, for `holdSeconds`.
    case neverReader = "never_reader"
    /// A device whose words hold text PostgreSQL cannot store (NUL), among good ones.
    case hostileStrings = "hostile_strings"
    /// A re-diarization job queued (202) just before the server is stopped (SIGTERM or SIGKILL).
    case jobAcrossRestart = "job_across_restart"
}

/// The faults of a run, in order, each held for its time, with a pause between them.
public struct FaultSchedule: Sendable {
    public struct Step: Sendable {
        public var fault: Fault
        public var holdSeconds: Double
    }

    public var steps: [Step]
    public var gapSeconds: Double

    public init(steps: [Step], gapSeconds: Double) {
        self.steps = steps
        self.gapSeconds = gapSeconds
    }

    /// Every kind of fault once (about two minutes with the devices' streaming): the schedule the
    /// test suite runs.
    public static let short = FaultSchedule(steps: [
        Step(fault: .networkCut, holdSeconds: 0),
        Step(fault: .postgresStop, holdSeconds: 3),
        Step(fault: .hostileStrings, holdSeconds: 0),
        Step(fault: .workerKill, holdSeconds: 0),
        Step(fault: .serverKill, holdSeconds: 0),
        Step(fault: .neverReader, holdSeconds: 12),
        Step(fault: .postgresFreeze, holdSeconds: 5),
        Step(fault: .serverTerm, holdSeconds: 0),
        Step(fault: .jobAcrossRestart, holdSeconds: 0),
    ], gapSeconds: 4)

    /// `count` faults drawn from every kind in a seeded order (each kind in every round of nine),
    /// PostgreSQL frozen for 20 s as a stuck disk would: the benchmark's schedule.
    public static func long(count: Int, seed: UInt64, gapSeconds: Double = 3) -> FaultSchedule {
        var random = SeededRandom(seed: seed)
        var steps: [Step] = []
        while steps.count < count {
            var round = Fault.allCases
            round.shuffle(using: &random)
            for fault in round where steps.count < count {
                let hold: Double = switch fault {
                case .postgresStop: 3
                case .postgresFreeze: 20
                case .neverReader: 15
                default: 0
                }
                steps.append(Step(fault: fault, holdSeconds: hold))
            }
        }
        return FaultSchedule(steps: steps, gapSeconds: gapSeconds)
    }
}
