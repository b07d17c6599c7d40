import CProviderProcess
import Foundation

/// Starts the cluster's tools and its server with posix_spawn, and runs tools to completion.
///
/// posix_spawn + waitpid rather than Foundation's Process: Process detects a child's exit through a
/// descriptor the child inherits, and a server started from it (or by it, as `pg_ctl start` does)
/// would hold that descriptor open forever. Here the child gets /dev/null for input, its output in a
/// file, no other descriptor of this process, default signal handling and an empty signal mask
/// (whatever the spawning thread blocks or this process ignores, as `serve` ignores SIGINT while it
/// waits for it). Its environment is the curated one (`ChildEnvironment`), never this process's.
enum ChildProcess {
    enum Output {
        case discard
        /// The file is emptied first.
        case replace(String)
        /// Appended to (the server's log across restarts).
        case append(String)
    }

    /// `environment`: the child's whole environment (`ChildEnvironment.curated`).
    static func spawn(_ argv: [String], environment: [String: String], output: Output, ownProcessGroup: Bool) throws -> pid_t {
        let envp = ChildEnvironment.entries(environment)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        switch output {
        case .discard: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // O_NOFOLLOW: these files are opened as root beside or inside the data folder; a symlink
        // planted there must not redirect the write.
        case .replace(let path): posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
        case .append(let path): posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0o600)
        }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard speakersync_spawn_close_from(&actions, 3) == 0 else {
            throw PGError(code: .clusterFailed, message: "this C library lacks posix_spawn_file_actions_addclosefrom_np (glibc >= 2.34 needed)")
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if ownProcessGroup {
            // A terminal's Ctrl-C goes to the foreground group: it must reach the owner only, which
            // then stops the server in order.
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        sigdelset(&everySignal, SIGKILL)
        sigdelset(&everySignal, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)

        var pid: pid_t = 0
        let status = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnvp in posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, cEnvp) }
        }
        guard status == 0 else {
            throw PGError(code: .clusterFailed, message: "cannot start \(argv[0]): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Runs a tool to completion (as `runAs` through setpriv when given), output to `logTo` or
    /// /dev/null; a failure carries the end of that log.
    static func run(_ tool: URL, _ arguments: [String], runAs: ClusterAccount?, logTo logPath: String?) throws {
        let argv = runAs.map { ["/usr/bin/setpriv"] + $0.setprivArguments + ["--", tool.path] } ?? [tool.path]
        let pid = try spawn(argv + arguments, environment: ChildEnvironment.curated(home: ChildEnvironment.home(of: runAs)),
                            output: logPath.map { .replace($0) } ?? .discard, ownProcessGroup: false)
        let status = waitForExit(pid)
        guard speakersync_wait_exited(status) != 0, speakersync_wait_exit_status(status) == 0 else {
            var detail = ""
            if let logPath, let logged = try? String(contentsOfFile: logPath, encoding: .utf8) {
                detail = ": " + String(logged.suffix(2000)).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw PGError(code: .clusterFailed,
                          message: "\(tool.lastPathComponent) \(arguments.joined(separator: " ")) failed (\(describe(status)))\(detail)")
        }
    }

    /// Waits for (and reaps) the child `pid`; returns its wait status.
    static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status
    }

    /// "exit status 1", "signal 9 (SIGKILL)".
    static func describe(_ status: Int32) -> String {
        if speakersync_wait_exited(status) != 0 { return "exit status \(speakersync_wait_exit_status(status))" }
        if speakersync_wait_signaled(status) != 0 {
            let signal = speakersync_wait_term_signal(status)
            let name = [SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM",
                        SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS"][signal]
            return "signal \(signal)" + (name.map { " (\($0))" } ?? "")
        }
        return "wait status \(status)"
    }

    /// The standard output of a short command (`pg_config --bindir`), through `spawn` into a private
    /// file. Not a pipe from Foundation's Process: its descriptors are inherited by whatever another
    /// thread spawns meanwhile, and reading to the end of the pipe then waits for that process too.
    /// CI hung this way for 20 minutes, with a browser driver started by another test holding the
    /// pipe's write end (the stacks showed `capture` blocked in `readDataToEndOfFile`).
    static func capture(_ tool: String, _ arguments: [String]) throws -> String {
        let folder = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                 appropriateFor: FileManager.default.temporaryDirectory, create: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputPath = folder.appendingPathComponent("output").path
        let pid = try spawn([tool] + arguments, environment: ChildEnvironment.curated(home: ChildEnvironment.home(of: nil)),
                            output: .replace(outputPath), ownProcessGroup: false)
        let status = waitForExit(pid)
        guard speakersync_wait_exited(status) != 0, speakersync_wait_exit_status(status) == 0 else {
            throw PGError(code: .clusterFailed, message: "\(tool) failed: \(describe(status))")
        }
        return try String(contentsOfFile: outputPath, encoding: .utf8)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
