#if canImport(Glibc)
import Glibc
#endif

/// Why a child process could not be started or talked to, with a stable code.
public struct SubprocessError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// The executable does not exist or cannot be run, or a spawn action failed.
        case spawnFailed = "spawn_failed"
        /// No pipe could be made (descriptors exhausted).
        case pipeFailed = "pipe_failed"
        /// Writing the child's input or reading its output failed.
        case ioFailed = "io_failed"
    }

    public var code: Code
    /// The call that failed, with what it was called on.
    public var call: String
    public var errno: Int32

    init(_ code: Code, call: String, errno: Int32) {
        self.code = code
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno))) (\(code.rawValue))" }
}
