import Foundation
import Logging

/// A server still running on a data folder whose lock nobody holds: left by an owner that died
/// before owners tied their server to themselves, or started by hand (`pg_ctl start`). The new owner
/// stops it and starts a supervised one of its own; it never adopts a server it did not start.
///
/// The pid comes from `postmaster.pid` and is trusted only when it names a live `postgres`
/// process whose working directory (PostgreSQL changes into its data folder) is this folder, so a
/// stale file whose pid now belongs to another program is never signalled. A stale file with no
/// such process is left to PostgreSQL, which handles it at start.
struct LeftoverPostmaster {
    let pid: pid_t

    static func find(in dataDirectory: URL) -> LeftoverPostmaster? {
        guard let text = try? String(contentsOfFile: dataDirectory.path + "/postmaster.pid", encoding: .utf8),
              let firstLine = text.split(separator: "\n").first,
              let pid = pid_t(firstLine.trimmingCharacters(in: .whitespaces)), pid > 0,
              ProcessState.isRunning(pid),
              ProcessState.command(pid) == "postgres" else { return nil }
        let ours = (dataDirectory.path as NSString).resolvingSymlinksInPath
        if let workingDirectory = ProcessState.workingDirectory(pid) {
            guard workingDirectory == ours else { return nil }
        } else {
            // Another user's process, whose folder we cannot read: the file's own record of it.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count > 1, (String(lines[1]) as NSString).resolvingSymlinksInPath == ours else { return nil }
        }
        return LeftoverPostmaster(pid: pid)
    }

    /// Fast shutdown (SIGINT), then SIGQUIT after `timeoutSeconds`; waits (bounded) for it to go.
    func stop(timeoutSeconds: Int, logger: Logger) throws {
        for (signal, wait) in [(SIGINT, Double(timeoutSeconds)), (SIGQUIT, 10.0)] {
            guard kill(pid, signal) == 0 || errno == ESRCH else {
                throw PGError(code: .clusterFailed, message: "a PostgreSQL server (pid \(pid)) still runs on this data folder "
                              + "and cannot be stopped by this user (\(String(cString: strerror(errno)))); stop it, then start again")
            }
            let deadline = Date(timeIntervalSinceNow: wait)
            while Date() < deadline {
                if !ProcessState.isRunning(pid) { return }
                usleep(50_000)
            }
            logger.warning("leftover PostgreSQL is slow to stop", metadata: ["pid": "\(pid)"])
        }
        throw PGError(code: .clusterFailed, message: "a PostgreSQL server (pid \(pid)) left running on this data folder did not stop")
    }
}

/// What /proc says about a process.
enum ProcessState {
    /// Alive and not a zombie (an exited process nobody reaped yet counts as gone).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // "pid (comm) S …": the state follows the command, which may itself hold ")".
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    static func command(_ pid: pid_t) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func workingDirectory(_ pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")
    }
}
