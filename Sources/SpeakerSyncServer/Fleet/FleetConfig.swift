/// How a server takes part in a fleet sharing one PostgreSQL (docs/deployment.md, "A fleet").
public struct FleetConfig: Sendable, Equatable {
    /// A server that could not renew its lease for this long loses its conversations to the fleet:
    /// it closes its sessions (1001, resumable) and others may claim them. Renewed every quarter of it.
    /// Shorter means faster takeover after a pause or a partition, longer means riding out longer
    /// PostgreSQL hiccups without moving devices.
    public var leaseSeconds: Double = 10
    /// How often the server publishes its sessions' figures for the fleet's session list.
    public var publishSeconds: Double = 2

    public static let `default` = FleetConfig()

    public init(leaseSeconds: Double = 10, publishSeconds: Double = 2) {
        self.leaseSeconds = leaseSeconds
        self.publishSeconds = publishSeconds
    }
}
