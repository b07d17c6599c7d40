import ChildProcesses
import Foundation

/// The `speakersync` command the package built (beside the test binary), run as a user would.
public enum CommandLineRun {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
        /// True when the command did not end by itself within the bound and was killed.
        public var timedOut: Bool
    }

    public static var executable: URL {
        get throws {
            URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                .deletingLastPathComponent().appendingPathComponent("speakersync")
        }
    }

    /// Runs `speakersync arguments…` with `environment` added to this process's, and waits for it;
    /// after `timeoutSeconds` (a bound so a test never hangs, not a measurement) it is killed.
    public static func run(_ arguments: [String], environment: [String: String] = [:], timeoutSeconds: Double = 300) async throws -> Result {
        let configuration = Subprocess.Configuration(executable: try executable.path, arguments: arguments,
                                                     environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        // On a thread of its own: the run blocks in poll until the command ends.
        let done = try await Blocking.run { try Subprocess.run(configuration, timeoutSeconds: timeoutSeconds, timeoutSignal: SIGTERM) }
        return Result(status: done.exit.status, standardOutput: done.standardOutputText, standardError: done.standardErrorText,
                      timedOut: done.timedOut)
    }
}
