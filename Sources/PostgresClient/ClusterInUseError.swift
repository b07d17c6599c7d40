import Foundation

/// `EmbeddedPostgresCluster.start()` could not become the cluster's owner: another process holds
/// the data folder's lock and runs its server. This process must not start, adopt or stop that
/// cluster; it may connect to it as a client (`startOrAttach()`) or use a database of its own.
public struct ClusterInUseError: Error, Sendable, CustomStringConvertible {
    /// The stable code callers and logs can match on.
    public static let code = "cluster_in_use"
    public var code: String { Self.code }
    /// The data folder whose cluster is owned elsewhere.
    public var dataDirectory: String
    /// The owner's process id as it wrote it into the lock file; nil when it could not be read
    /// (the owner took the lock a moment ago and has not written it yet).
    public var ownerPID: pid_t?
    /// How to reach the owner's database (its private socket), for a process that may share it.
    public var connectionString: String

    public init(dataDirectory: String, ownerPID: pid_t?, connectionString: String) {
        self.dataDirectory = dataDirectory
        self.ownerPID = ownerPID
        self.connectionString = connectionString
    }

    /// "pid 1234", or "another process" when the pid is unknown.
    public var ownerDescription: String { ownerPID.map { "pid \($0)" } ?? "another process" }

    public var description: String {
        "\(code): the embedded PostgreSQL in \(dataDirectory) is owned by \(ownerDescription)"
    }
}
