import ChildProcesses
import FaultInjection
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync serve` as a child process (the executable the build put beside the test bundle), so
/// a test can kill it with SIGKILL the way a crash or an OOM kill would, and start another.
public final class ServerProcess: Sendable {
    public let port: Int
    public let adminKey: String
    private let process: Subprocess

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts a server on `port` (a free one when nil) against `databaseURL`; returns once `/healthz`
    /// answers (bounded: 60 s).
    /// `environment`: variables added to the server's environment (an empty SPEAKERSYNC_ADMIN_KEY lets
    /// it generate and write its own key).
    public convenience init(databaseURL: String, port: Int? = nil, adminKey: String = "resilience-admin-key-0123456789abcdef",
                            extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        try self.init(database: ["--database-url", databaseURL], port: port, adminKey: adminKey, extraArguments: extraArguments,
                      extraEnvironment: environment)
    }

    /// Starts a server that owns the embedded PostgreSQL under `embeddedDataDirectory` (no
    /// --database-url, DATABASE_URL unset), as `speakersync serve` does on a machine with no database.
    /// The server is started from `ParentThread.processLifetime`, so its parent-death signal (and its
    /// children's) fires only when the test process ends.
    /// `environment`: variables added to the server's environment (after DATABASE_URL is removed).
    public convenience init(embeddedDataDirectory: String, port: Int? = nil,
                            adminKey: String = "resilience-admin-key-0123456789abcdef", extraArguments: [String] = [],
                            environment: [String: String] = [:]) throws {
        try self.init(database: ["--data-dir", embeddedDataDirectory], port: port, adminKey: adminKey, extraArguments: extraArguments,
                      extraEnvironment: environment)
    }

    private init(database: [String], port: Int?, adminKey: String, extraArguments: [String],
                 extraEnvironment: [String: String] = [:]) throws {
        self.port = try port ?? Self.freePort()
        self.adminKey = adminKey
        let arguments = ["serve", "--port", "\(self.port)"] + database + ["--log-level", "error"] + extraArguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment["SPEAKERSYNC_ADMIN_KEY"] = adminKey
        environment["SPEAKERSYNC_EXIT_WITH_PARENT"] = "1" // a crashed test run leaves no server behind
        environment.merge(extraEnvironment) { $1 }
        var configuration = Subprocess.Configuration(executable: try Self.executableURL().path, arguments: arguments, environment: environment)
        configuration.standardOutput = .inherit
        configuration.standardError = .inherit
        // From a thread that lives as long as the test process: the server's parent-death signal
        // fires when the thread that spawned it ends, and Dispatch and concurrency threads end when idle.
        let process = try ParentThread.processLifetime.runAndWait { [configuration] in try Subprocess(configuration) }
        self.process = process
        var healthy = false
        for _ in 0..<600 where !healthy {
            if let exit = process.exit { throw Failure(description: "speakersync serve ended with \(exit)") }
            healthy = Self.answers(port: self.port)
            if !healthy { Thread.sleep(forTimeInterval: 0.1) }
        }
        guard healthy else {
            kill()
            throw Failure(description: "the server did not answer /healthz within 60 s")
        }
    }

    deinit { kill() }

    /// The `speakersync` executable the build put beside the test bundle.
    public static func executableURL() throws -> URL {
        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("speakersync")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw Failure(description: "no speakersync executable at \(executable.path); build it first (swift build)")
        }
        return executable
    }

    public var processID: Int32 { process.processIdentifier }

    /// SIGKILL: no shutdown, no flush, exactly like a crash.
    public func kill() {
        guard process.isRunning else { return }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: the process stops as a VM pause or a long GC stall would, its sockets left open.
    public func pause() { process.signal(SIGSTOP) }

    /// SIGCONT after `pause`.
    public func resume() { process.signal(SIGCONT) }

    /// SIGTERM, then waits for the process to exit: the orderly stop an operator or an orchestrator
    /// asks for. Returns the exit status.
    @discardableResult
    public func terminate() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.signal(SIGTERM)
        return process.waitUntilExit().status
    }

    /// Whether `/healthz` on `port` answers 200 (the server is up and reaches its database).
    public static func answers(port: Int) -> Bool {
        guard let connection = try? RawConnection(port: port, timeoutSeconds: 2) else { return false }
        guard (try? connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) != nil else { return false }
        return (try? connection.readHead())?.hasPrefix("HTTP/1.1 200") == true
    }

    public static func freePort() throws -> Int {
        guard let (fd, port) = LoopbackSocket.bind(listening: false) else { throw Failure(description: "cannot find a free port") }
        close(fd)
        return port
    }
}
