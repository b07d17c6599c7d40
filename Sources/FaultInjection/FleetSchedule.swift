import DeterministicRandom

/// One thing the fleet harness does to the fleet while devices stream.
public enum FleetFault: String, CaseIterable, Sendable, Hashable {
    /// A server SIGKILLed (a re-diarization job queued on it just before, when a finished
    /// conversation kept its audio); started again after `holdSeconds`, so capacity returns.
    case serverKill = "server_kill"
    /// A server cut off from PostgreSQL (and only from it) for `holdSeconds`, longer than its lease:
    /// it must stop writing, and its devices move.
    case postgresPartition = "postgres_partition"
    /// A device cut off from HAProxy for `holdSeconds`.
    case devicePartition = "device_partition"
    /// A server SIGSTOPped for `holdSeconds`, past its lease, then SIGCONTed.
    case serverPause = "server_pause"

    /// Whether the fault takes a server from its devices (their takeover is timed).
    public var movesDevices: Bool { self != .devicePartition }
}

/// The fleet faults of a run, in order, with a pause between them.
public struct FleetSchedule: Sendable {
    public struct Step: Sendable {
        public var fault: FleetFault
        public var holdSeconds: Double
        /// The server (0, 1, 2: a, b, c) or the device (an index into the run's devices) it hits.
        public var target: Int
    }

    public var steps: [Step]
    public var gapSeconds: Double

    public init(steps: [Step], gapSeconds: Double) {
        self.steps = steps
        self.gapSeconds = gapSeconds
    }

    /// How long each fault is held, given the servers' lease: partitions and pauses outlast it
    /// (twice over, and at least 15 s and 20 s), a killed server stays down 8 s, a device 5 s.
    static func hold(_ fault: FleetFault, leaseSeconds: Double) -> Double {
        switch fault {
        case .serverKill: 8
        case .postgresPartition: max(15, 2 * leaseSeconds + 3)
        case .devicePartition: 5
        case .serverPause: max(20, 2 * leaseSeconds + 5)
        }
    }

    /// Every kind of fault, each server hit (about three minutes with the devices' streaming): a
    /// device cut off, server a cut off from PostgreSQL, server b paused, server c killed (with a
    /// job queued on it), another device cut off, server a killed.
    public static func short(leaseSeconds: Double) -> FleetSchedule {
        let plan: [(FleetFault, Int)] = [
            (.devicePartition, 0), (.postgresPartition, 0), (.serverPause, 1), (.serverKill, 2), (.devicePartition, 1), (.serverKill, 0),
        ]
        return FleetSchedule(steps: plan.map { Step(fault: $0.0, holdSeconds: hold($0.0, leaseSeconds: leaseSeconds), target: $0.1) },
                             gapSeconds: 8)
    }

    /// `count` faults in a seeded order (every kind in each round of four), on servers and devices
    /// drawn from the same seed.
    public static func long(count: Int, seed: UInt64, leaseSeconds: Double, gapSeconds: Double = 8, deviceCount: Int) -> FleetSchedule {
        var random = SeededRandom(seed: seed)
        var steps: [Step] = []
        while steps.count < count {
            var round = FleetFault.allCases
            round.shuffle(using: &random)
            for fault in round where steps.count < count {
                let target = fault == .devicePartition ? random.index(max(1, deviceCount)) : random.index(3)
                steps.append(Step(fault: fault, holdSeconds: hold(fault, leaseSeconds: leaseSeconds), target: target))
            }
        }
        return FleetSchedule(steps: steps, gapSeconds: gapSeconds)
    }
}
