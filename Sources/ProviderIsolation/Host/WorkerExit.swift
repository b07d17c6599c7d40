#if canImport(Glibc)
import Glibc
#endif
import CProviderProcess

/// How a worker process ended, from its wait status and resource usage, in words an operator reads in
/// a session error ("provider speakerkit crashed: signal 11 (SIGSEGV)").
public struct WorkerExit: Sendable, Hashable, CustomStringConvertible {
    public enum Cause: Sendable, Hashable {
        case exited(status: Int32)
        case signaled(signal: Int32, coreDumped: Bool)
        /// The status could not be read (the process was reaped by someone else).
        case unknown
    }

    public var cause: Cause
    /// Peak resident memory, when known.
    public var peakResidentBytes: UInt64?
    /// The worker's memory limit, when one was set.
    public var memoryLimitBytes: UInt64?

    public init(cause: Cause, peakResidentBytes: UInt64? = nil, memoryLimitBytes: UInt64? = nil) {
        self.cause = cause
        self.peakResidentBytes = peakResidentBytes
        self.memoryLimitBytes = memoryLimitBytes
    }

    /// From `wait4`'s status and `ru_maxrss` (kilobytes on Linux).
    public init(waitStatus: Int32, maxResidentKilobytes: Int, memoryLimitBytes: UInt64?) {
        if speakersync_wait_signaled(waitStatus) != 0 {
            cause = .signaled(signal: speakersync_wait_term_signal(waitStatus), coreDumped: speakersync_wait_core_dumped(waitStatus) != 0)
        } else if speakersync_wait_exited(waitStatus) != 0 {
            cause = .exited(status: speakersync_wait_exit_status(waitStatus))
        } else {
            cause = .unknown
        }
        peakResidentBytes = maxResidentKilobytes > 0 ? UInt64(maxResidentKilobytes) * 1024 : nil
        self.memoryLimitBytes = memoryLimitBytes
    }

    /// Whether the worker's resident memory had come near its limit: then its end is probably an
    /// allocation the limit refused. The limit counts address space (heap, thread stacks) of which only
    /// part is resident, so "near" is half: a leak that hit a 512 MiB limit peaked at 370 MiB resident.
    public var reachedMemoryLimit: Bool {
        guard let peak = peakResidentBytes, let limit = memoryLimitBytes, limit > 0 else { return false }
        return Double(peak) >= 0.5 * Double(limit)
    }

    /// "signal 11 (SIGSEGV)", "exit status 3", with the memory note when it applies.
    public var description: String {
        var text: String
        switch cause {
        case .exited(let status): text = "exit status \(status)"
        case .signaled(let signal, let core):
            text = "signal \(signal)"
            if let name = Self.signalName(signal) { text += " (\(name))" }
            if core { text += ", core dumped" }
        case .unknown: text = "an unknown cause"
        }
        if reachedMemoryLimit, let peak = peakResidentBytes, let limit = memoryLimitBytes {
            text += "; its memory had reached \(peak >> 20) MiB resident, near its \(limit >> 20) MiB limit"
        }
        return text
    }

    /// The verb for a session error: an exit is not a crash, a signal is.
    public var verb: String {
        if case .exited = cause { return "exited" }
        return "crashed"
    }

    static func signalName(_ signal: Int32) -> String? {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGTERM: "SIGTERM"
        case SIGTRAP: "SIGTRAP"
        case SIGSYS: "SIGSYS"
        case SIGXCPU: "SIGXCPU"
        case SIGXFSZ: "SIGXFSZ"
        case SIGPIPE: "SIGPIPE"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: nil
        }
    }
}
