import CProviderProcess
#if canImport(Glibc)
import Glibc
#endif

/// The raw process calls behind `Subprocess`, each turning its return code into a thrown
/// `SubprocessError` (as swift-nio's System.swift does for its sockets).
enum SubprocessSystem {
    /// A pipe whose ends are close-on-exec from birth (pipe2): whatever another thread spawns at the
    /// same moment (with Foundation's Process, whose descriptor list is a snapshot taken before the
    /// spawn, say) cannot inherit an end and so hold a reader's end-of-file back while it lives.
    static func pipe() throws(SubprocessError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let status = fds.withUnsafeMutableBufferPointer { speakersync_pipe_cloexec($0.baseAddress) }
        guard status == 0 else { throw SubprocessError(.pipeFailed, call: "pipe2", errno: errno) }
        return (fds[0], fds[1])
    }

    /// A descriptor that is readable once `pid` has exited; nil where the kernel lacks pidfd_open.
    static func pidDescriptor(_ pid: pid_t) -> Int32? {
        let fd = speakersync_pidfd_open(pid)
        return fd >= 0 ? fd : nil
    }

    /// Blocks until `fd` (a pidfd) is readable, that is until its process has exited.
    static func awaitReadable(_ fd: Int32) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while Glibc.poll(&entry, 1, -1) < 0 && errno == EINTR {}
    }

    /// Blocks until `pid` has exited without reaping it (waitid WNOWAIT), where pidfds are missing.
    static func awaitExitWithoutReaping(_ pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    enum Reaped {
        case running
        case exited(Int32)
        /// Someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere): its status is lost.
        case gone
    }

    /// waitpid(WNOHANG): the wait status if `pid` has exited (it is reaped then).
    static func reap(_ pid: pid_t) -> Reaped {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return .exited(status) }
            if result == 0 { return .running }
            if errno == EINTR { continue }
            return .gone
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// posix_spawn with the descriptors `redirections` gives (child descriptor → action), every other
    /// descriptor from 3 up closed in the child (closefrom at exec time, not a snapshot taken before:
    /// a descriptor another thread opens meanwhile is closed too), an empty signal mask and default
    /// signal handling (whatever the spawning thread blocks or this process ignores).
    static func spawn(path: String, argv: [String], environment: [String]?, workingDirectory: String?,
                      redirections: [(child: Int32, action: Redirection)], group: Subprocess.ProcessGroup) throws(SubprocessError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawn_file_actions_init", errno: ENOMEM) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (child, action) in redirections {
            let status: Int32
            switch action {
            case .devNull(let flags): status = posix_spawn_file_actions_addopen(&actions, child, "/dev/null", flags, 0)
            case .duplicate(let fd): status = posix_spawn_file_actions_adddup2(&actions, fd, child)
            }
            guard status == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawn_file_actions (descriptor \(child))", errno: status) }
        }
        let closing = speakersync_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawn_file_actions_addclosefrom_np", errno: closing) }
        if let workingDirectory {
            let status = workingDirectory.withCString { speakersync_spawn_chdir(&actions, $0) }
            guard status == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawn_file_actions_addchdir_np \(workingDirectory)", errno: status) }
        }

        var attributes = posix_spawnattr_t()
        guard posix_spawnattr_init(&attributes) == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawnattr_init", errno: ENOMEM) }
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if case .own = group {
            // Its own process group, as Foundation's Process gives: a terminal's Ctrl-C reaches this
            // process only, which then stops its children itself.
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            _ = posix_spawnattr_setpgroup(&attributes, 0)
        }
        _ = posix_spawnattr_setflags(&attributes, Int16(flags))
        if case .newSession = group {
            let status = speakersync_spawn_new_session(&attributes)
            guard status == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawnattr_setflags POSIX_SPAWN_SETSID", errno: status) }
        }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        _ = posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        sigdelset(&everySignal, SIGKILL)
        sigdelset(&everySignal, SIGSTOP)
        _ = posix_spawnattr_setsigdefault(&attributes, &everySignal)

        var pid: pid_t = 0
        let cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArgv { free(pointer) } }
        let cEnvironment: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in cEnvironment ?? [] { free(pointer) } }
        let status = path.withCString { cPath in
            if let cEnvironment {
                return cEnvironment.withUnsafeBufferPointer { posix_spawn(&pid, cPath, &actions, &attributes, cArgv, $0.baseAddress) }
            }
            return posix_spawn(&pid, cPath, &actions, &attributes, cArgv, environ)
        }
        guard status == 0 else { throw SubprocessError(.spawnFailed, call: "posix_spawn \(path)", errno: status) }
        return pid
    }

    enum Redirection {
        case devNull(flags: Int32)
        case duplicate(Int32)
    }
}
