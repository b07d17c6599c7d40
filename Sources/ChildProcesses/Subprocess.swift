import CProviderProcess
import Foundation
import Synchronization

/// A child process, started with posix_spawn so that it inherits nothing but its three standard
/// descriptors, and waited on through a pidfd.
///
/// Why not Foundation's Process: on Linux it emulates close-on-exec by listing the descriptors open
/// *before* the spawn, and its pipes are not close-on-exec. A pipe another thread makes in that window
/// leaks into the child; when the child is a long-lived one (a server a test starts) the pipe's reader
/// never sees its end-of-file. That is how a test run hung reading espeak-ng's output while other
/// tests started servers. Here every descriptor from 3 up is closed at exec time (closefrom) and every
/// pipe is close-on-exec from birth, so neither side can leak into the other.
///
/// The process is reaped once, under a lock, by whichever of `isRunning`, `exit` or `waitUntilExit`
/// first finds it ended, so several threads may ask. Dropping the object does not stop the process.
public final class Subprocess: Sendable {
    public enum Input: Sendable {
        /// /dev/null.
        case null
        /// A pipe: write to `standardInput`, close it for end-of-file.
        case pipe
        /// This descriptor (a file opened by the caller; the caller keeps it).
        case descriptor(Int32)
        /// This process's standard input.
        case inherit
    }

    public enum Output: Sendable {
        case null
        /// A pipe: read `standardOutput` / `standardError` (read both before waiting, or the child
        /// blocks on a full pipe: `Subprocess.run` does).
        case pipe
        /// This descriptor (a log file opened by the caller; the caller keeps it).
        case descriptor(Int32)
        /// This process's own descriptor of the same number.
        case inherit
        /// Standard error only: wherever standard output goes.
        case standardOutput
    }

    public enum ProcessGroup: Sendable {
        /// This process's group (a terminal's Ctrl-C reaches the child too).
        case inherit
        /// A group of its own (Foundation's Process does the same), the default.
        case own
        /// A session of its own (setsid): also detached from the terminal.
        case newSession
    }

    public struct Configuration: Sendable {
        /// A path to the executable (no PATH search).
        public var executable: String
        /// The arguments after argv[0] (which is `executable`).
        public var arguments: [String]
        /// The child's whole environment; nil: this process's.
        public var environment: [String: String]?
        public var workingDirectory: String?
        public var standardInput: Input = .null
        public var standardOutput: Output = .null
        public var standardError: Output = .null
        public var processGroup: ProcessGroup = .own

        public init(executable: String, arguments: [String] = [], environment: [String: String]? = nil) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
        }
    }

    /// How the process ended.
    public struct Exit: Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            case exited
            case signalled
            /// Reaped by someone else (SIGCHLD ignored, or a waitpid for any child elsewhere).
            case unknown
        }

        public var reason: Reason
        /// The exit code, or the signal's number when signalled (Foundation's terminationStatus).
        public var status: Int32

        public var succeeded: Bool { reason == .exited && status == 0 }

        init(waitStatus: Int32) {
            if speakersync_wait_signaled(waitStatus) != 0 {
                self = Exit(reason: .signalled, status: speakersync_wait_term_signal(waitStatus))
            } else {
                self = Exit(reason: .exited, status: speakersync_wait_exit_status(waitStatus))
            }
        }

        public init(reason: Reason, status: Int32) {
            self.reason = reason
            self.status = status
        }

        public var description: String {
            switch reason {
            case .exited: "exit status \(status)"
            case .signalled: "signal \(status)"
            case .unknown: "an unknown status (reaped elsewhere)"
            }
        }
    }

    public let processIdentifier: pid_t
    /// The write end of the child's standard input, with `Input.pipe`.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output, with `Output.pipe`.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, with `Output.pipe`.
    public let standardError: FileHandle?
    /// Readable once the process has exited; -1 where the kernel has no pidfds.
    private let pidDescriptor: Int32
    private let ended = Mutex<Exit?>(nil)

    /// Starts the process.
    public init(_ configuration: Configuration) throws(SubprocessError) {
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        // Anything made before a failed spawn is closed again.
        var spawned = false
        defer {
            for fd in childEnds { SubprocessSystem.close(fd) }
            if !spawned { for fd in parentEnds { SubprocessSystem.close(fd) } }
        }
        var redirections: [(child: Int32, action: SubprocessSystem.Redirection)] = []
        var inputEnd: Int32?
        switch configuration.standardInput {
        case .null: redirections.append((0, .devNull(flags: O_RDONLY)))
        case .pipe:
            let pipe = try SubprocessSystem.pipe()
            childEnds.append(pipe.read)
            parentEnds.append(pipe.write)
            inputEnd = pipe.write
            redirections.append((0, .duplicate(pipe.read)))
        case .descriptor(let fd): redirections.append((0, .duplicate(fd)))
        case .inherit: break
        }
        var outputEnds: [Int32: Int32] = [:]
        for (child, output) in [(Int32(1), configuration.standardOutput), (Int32(2), configuration.standardError)] {
            switch output {
            case .null: redirections.append((child, .devNull(flags: O_WRONLY)))
            case .pipe:
                let pipe = try SubprocessSystem.pipe()
                childEnds.append(pipe.write)
                parentEnds.append(pipe.read)
                outputEnds[child] = pipe.read
                redirections.append((child, .duplicate(pipe.write)))
            case .descriptor(let fd): redirections.append((child, .duplicate(fd)))
            case .inherit: break
            // In order: descriptor 1 is already the child's standard output when this runs.
            case .standardOutput: redirections.append((child, .duplicate(1)))
            }
        }
        let environment = configuration.environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        let pid = try SubprocessSystem.spawn(path: configuration.executable, argv: [configuration.executable] + configuration.arguments,
                                             environment: environment, workingDirectory: configuration.workingDirectory,
                                             redirections: redirections, group: configuration.processGroup)
        spawned = true
        processIdentifier = pid
        // The child is not reaped before this runs (only this object reaps it), so the number is still its.
        pidDescriptor = SubprocessSystem.pidDescriptor(pid) ?? -1
        standardInput = inputEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = outputEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = outputEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    deinit {
        _ = reapIfEnded()
        if pidDescriptor >= 0 { SubprocessSystem.close(pidDescriptor) }
    }

    /// How it ended, or nil while it runs (reaps it when it has ended).
    public var exit: Exit? { reapIfEnded() }

    public var isRunning: Bool { reapIfEnded() == nil }

    /// Blocks until the process has ended.
    @discardableResult
    public func waitUntilExit() -> Exit {
        while true {
            if let exit = reapIfEnded() { return exit }
            if pidDescriptor >= 0 {
                SubprocessSystem.awaitReadable(pidDescriptor)
            } else {
                SubprocessSystem.awaitExitWithoutReaping(processIdentifier)
            }
        }
    }

    /// The exit code or signal number once ended (as Foundation's terminationStatus); -1 while running.
    public var terminationStatus: Int32 { exit?.status ?? -1 }

    /// Sends `signal` unless the process is already reaped (its number may then be someone else's).
    public func signal(_ signal: Int32) {
        ended.withLock { exit in
            guard exit == nil else { return }
            _ = Glibc.kill(processIdentifier, signal)
        }
    }

    private func reapIfEnded() -> Exit? {
        ended.withLock { exit in
            if let exit { return exit }
            switch SubprocessSystem.reap(processIdentifier) {
            case .running: return nil
            case .exited(let status): exit = Exit(waitStatus: status)
            case .gone: exit = Exit(reason: .unknown, status: -1)
            }
            return exit
        }
    }
}
