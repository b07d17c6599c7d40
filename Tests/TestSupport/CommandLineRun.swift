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
        let process = Process()
        process.executableURL = try executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
        let complained = Task.detached { errors.fileHandleForReading.readDataToEndOfFile() }
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now > deadline {
                timedOut = true
                process.terminate()
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Blocking.run { process.waitUntilExit() }
        return Result(status: process.terminationStatus, standardOutput: String(decoding: await printed.value, as: UTF8.self),
                      standardError: String(decoding: await complained.value, as: UTF8.self), timedOut: timedOut)
    }
}
