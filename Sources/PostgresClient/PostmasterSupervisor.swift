import Foundation
import Logging

/// How the owner starts its server: `postgres -D DIR` as a direct child, through
/// `setpriv --pdeathsig SIGINT` (and, as root, `--reuid/--regid --clear-groups` to the
/// unprivileged account), in a process group of its own, its output appended to `server.log`, with
/// the curated environment (`ChildEnvironment`): nothing of this process's own.
///
/// The parent-death signal is what keeps a server from outliving its owner: the kernel sends it
/// when the thread that spawned the server exits, and with it the owner's whole process, however it
/// ends (SIGKILL, a crash). SIGINT asks PostgreSQL for a fast shutdown. setpriv 2.38 applies the
/// signal after it changes the uid (a uid change clears it) and it survives the exec of postgres,
/// which is not set-uid: EmbeddedPostgresOwnerProcessTests checks it for real. The one window it
/// leaves (the owner dying between the spawn and setpriv's prctl) ends like an owner from before
/// the lock: the next owner finds a leftover server and stops it.
struct PostmasterLaunch: Sendable {
    static let setpriv = "/usr/bin/setpriv"

    var argv: [String]
    var environment: [String: String]
    var logPath: String

    init(binDirectory: URL, dataDirectory: String, runAs: ClusterAccount?, logPath: String) {
        let postgres = [binDirectory.appendingPathComponent("postgres").path, "-D", dataDirectory]
        if FileManager.default.isExecutableFile(atPath: Self.setpriv) {
            argv = [Self.setpriv, "--pdeathsig", "SIGINT"] + (runAs?.setprivArguments ?? []) + ["--"] + postgres
        } else {
            // Without util-linux's setpriv the server cannot be tied to this process (nor run as
            // another user: ClusterAccount's users are root, and root always has setpriv on Debian).
            argv = postgres
        }
        environment = ChildEnvironment.curated(home: ChildEnvironment.home(of: runAs))
        self.logPath = logPath
    }

    var hasParentDeathSignal: Bool { argv.first == Self.setpriv }

    func spawn() throws -> pid_t { try ChildProcess.spawn(argv, environment: environment, output: .append(logPath), ownProcessGroup: true) }
}

/// Runs the owner's server as a supervised child: spawns it from a thread of its own, reaps it, and
/// starts it again when it dies while nobody asked it to stop.
///
/// The thread lives exactly as long as the supervision: the server's parent-death signal fires when
/// the thread that spawned it exits, so it must be neither a transient thread nor a Swift
/// concurrency or Dispatch thread (those come and go). Restarts back off from 0.5 s, doubling while
/// the server keeps dying within a minute of its start, up to 10 s; each one is logged and counted.
///
/// `@unchecked Sendable`: every mutable field is read and written only with `condition` locked; the
/// supervisor thread and callers of `stop()` meet only there.
final class PostmasterSupervisor: @unchecked Sendable {
    enum Phase: Equatable {
        /// Spawned, not yet accepting connections: an exit now is a failed start, not restarted.
        case starting
        /// Accepted connections once: exits are restarted.
        case running
        case failed(String)
        case stopped
    }

    static let firstRestartDelay = 0.5
    static let maxRestartDelay = 10.0
    /// A server that ran at least this long before dying starts the backoff over.
    static let stableSeconds = 60.0

    private let launch: PostmasterLaunch
    private let logger: Logger
    private let condition = NSCondition()
    private var phase = Phase.starting
    /// The server's pid while it runs or is an unreaped zombie: signalling it is then always safe
    /// (the pid cannot be reused before the supervisor reaps it, which it does holding `condition`).
    private var child: pid_t?
    private var stopRequested = false
    private var restarts = 0

    init(launch: PostmasterLaunch, logger: Logger) {
        self.launch = launch
        self.logger = logger
    }

    /// Starts the supervisor thread; returns once it has spawned the server (its pid), or throws
    /// when it could not.
    func start() throws -> pid_t {
        let thread = Thread { [self] in supervise() }
        thread.name = "speakersync.postgres-supervisor"
        thread.start()
        condition.lock()
        defer { condition.unlock() }
        while child == nil, phase == .starting { condition.wait() }
        if let child { return child }
        throw PGError(code: .clusterFailed, message: failureLocked ?? "the embedded PostgreSQL did not start")
    }

    /// The server accepted a connection: from now on its exits are restarted. False when it had
    /// already failed.
    @discardableResult
    func markRunning() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if phase == .starting { phase = .running }
        return phase == .running
    }

    /// Why the first server ended before it accepted connections, once it has.
    var failure: String? {
        condition.lock()
        defer { condition.unlock() }
        return failureLocked
    }

    private var failureLocked: String? {
        if case .failed(let reason) = phase { return reason }
        return nil
    }

    /// The running server's pid (nil while it is being restarted).
    var pid: pid_t? {
        condition.lock()
        defer { condition.unlock() }
        return child
    }

    /// How many times the server was started again after it died.
    var restartCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return restarts
    }

    /// Ends supervision first (no restart after this), then stops the server in order: SIGINT (fast
    /// shutdown: sessions end, a checkpoint, exit), SIGQUIT if that takes longer than
    /// `timeoutSeconds`, SIGKILL ten seconds later; returns once the supervisor reaped it and its
    /// thread ended. Safe to call more than once.
    func stop(timeoutSeconds: Int) {
        condition.lock()
        defer { condition.unlock() }
        stopRequested = true
        condition.broadcast()
        if let child { kill(child, SIGINT) }
        var escalation: [(signal: Int32, name: String)] = [(SIGQUIT, "SIGQUIT"), (SIGKILL, "SIGKILL")]
        var deadline = Date(timeIntervalSinceNow: TimeInterval(timeoutSeconds))
        while !isFinishedLocked {
            if condition.wait(until: deadline) { continue }
            guard !escalation.isEmpty else { deadline = .distantFuture; continue }
            let next = escalation.removeFirst()
            logger.warning("embedded PostgreSQL is slow to stop; sending \(next.name)", metadata: ["pid": "\(child ?? 0)"])
            if let child { kill(child, next.signal) }
            deadline = Date(timeIntervalSinceNow: 10)
        }
    }

    private var isFinishedLocked: Bool {
        switch phase {
        case .stopped, .failed: return true
        case .starting, .running: return false
        }
    }

    private func finishLocked(_ final: Phase) {
        phase = final
        condition.broadcast()
    }

    // MARK: The supervisor thread

    private func supervise() {
        var delay = Self.firstRestartDelay
        while true {
            let startedAt = Date()
            let reason: String
            do {
                let pid = try launch.spawn()
                condition.lock()
                child = pid
                condition.broadcast()
                // stop() may have run while the spawn was under way and found no pid to signal.
                if stopRequested { kill(pid, SIGINT) }
                condition.unlock()
                reason = awaitExit(of: pid)
            } catch {
                reason = "it could not be started: \(error)"
            }

            condition.lock()
            if stopRequested {
                finishLocked(.stopped)
                condition.unlock()
                return
            }
            if phase == .starting {
                finishLocked(.failed("PostgreSQL ended before it accepted connections (\(reason))"))
                condition.unlock()
                return
            }
            condition.unlock()

            if Date().timeIntervalSince(startedAt) >= Self.stableSeconds { delay = Self.firstRestartDelay }
            logger.error("embedded PostgreSQL stopped unexpectedly; restarting it", metadata: [
                "reason": "\(reason)", "restart_in_seconds": "\(delay)", "restarts_so_far": "\(restartCount)"])
            condition.lock()
            let deadline = Date(timeIntervalSinceNow: delay)
            while !stopRequested, condition.wait(until: deadline) {}
            if stopRequested {
                finishLocked(.stopped)
                condition.unlock()
                return
            }
            restarts += 1
            let count = restarts
            condition.unlock()
            logger.notice("restarting embedded PostgreSQL", metadata: ["restart": "\(count)"])
            delay = min(delay * 2, Self.maxRestartDelay)
        }
    }

    /// Blocks until the server exits, then reaps it with `condition` locked (so `stop()` never
    /// signals a reused pid). Returns how it ended.
    private func awaitExit(of pid: pid_t) -> String {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        condition.lock()
        defer { condition.unlock() }
        child = nil
        return ChildProcess.describe(ChildProcess.waitForExit(pid))
    }
}
