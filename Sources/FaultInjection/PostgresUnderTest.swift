import Foundation
import Logging
import PostgresClient

/// The PostgreSQL a fault run's server uses: a cluster the harness owns (its own data folder), so it
/// can stop, start and freeze it under the server, as an operator's outage or a stuck disk would.
public final class PostgresUnderTest: Sendable {
    public let cluster: EmbeddedPostgresCluster
    /// The server's database (created at the first start).
    public let connectionString: String

    public init(folder: URL, logger: Logger) throws {
        cluster = EmbeddedPostgresCluster(dataDirectory: folder, config: EmbeddedPostgresConfig(maxConnections: 200), logger: logger)
        connectionString = try cluster.start()
    }

    /// A fast shutdown; the server sees its connections end.
    public func stop() { cluster.stop() }

    public func start() throws { _ = try cluster.start() }

    /// SIGSTOP on the postmaster and every backend: connections stay open and nothing answers, the
    /// failure a blocking client never returns from. `thaw()` lets it go on.
    public func freeze() -> [pid_t] {
        let tree = Self.processTree(root: cluster.postmasterPID)
        for pid in tree { kill(pid, SIGSTOP) }
        return tree
    }

    public func thaw(_ tree: [pid_t]) {
        for pid in tree { kill(pid, SIGCONT) }
    }

    /// `root` and its children (a postmaster's backends and helpers).
    static func processTree(root: pid_t?) -> [pid_t] {
        guard let root else { return [] }
        var tree = [root]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), ProcessStatus.parent(of: pid) == root else { continue }
            tree.append(pid)
        }
        return tree
    }
}

/// What /proc says about a process.
public enum ProcessStatus {
    /// The parent's pid, from /proc/PID/stat (after the command name, which may hold spaces).
    public static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// Resident set size in bytes (VmRSS), nil when the process is gone.
    public static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }
}
