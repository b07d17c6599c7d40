import ChildProcesses
import Foundation
import SpeakerSyncClient
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync serve` as a child process on a fixed port, so a fault run can SIGKILL it the way a
/// crash or the OOM killer would, SIGTERM it the way a deploy does, and start it again where
/// devices will find it.
///
/// `@unchecked Sendable`: `process` is replaced only by `start()` and read by the other methods, all
/// called from the run's one orchestrating task, one at a time.
public final class ServerUnderTest: @unchecked Sendable {
    public let port: Int
    public let adminKey: String
    public let databaseURL: String
    /// Where the harness reaches it (`baseURL`): loopback, or the server's address on the fleet
    /// harness's test network.
    public let host: String
    private let executable: URL
    private let extraArguments: [String]
    private let logFile: URL?
    /// A command the server is started through (`ip netns exec ss-a`), empty for none.
    private let launcher: [String]
    private let parent = ParentThread()
    private var process: Subprocess?

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `executable`: the `speakersync` binary; `logFile`: where its output goes (nil: discarded).
    /// `host`: where the harness reaches the server (it listens there only if `extraArguments` says
    /// `--host`); `launcher`: a command it is started through (the fleet harness's `ip netns exec`).
    public init(executable: URL, databaseURL: String, port: Int, adminKey: String, extraArguments: [String] = [], logFile: URL? = nil,
                host: String = "127.0.0.1", launcher: [String] = []) {
        self.executable = executable
        self.databaseURL = databaseURL
        self.port = port
        self.adminKey = adminKey
        self.extraArguments = extraArguments
        self.logFile = logFile
        self.host = host
        self.launcher = launcher
    }

    deinit {
        kill()
        parent.finish()
    }

    /// The `speakersync` binary beside the running one (the bench's, or the test bundle's).
    public static func siblingExecutable() throws -> URL {
        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("speakersync")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw Failure(description: "no speakersync executable at \(executable.path); build it first")
        }
        return executable
    }

    public var processID: pid_t? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    public var baseURL: String { "http://\(host):\(port)" }

    /// Starts the server and waits (bounded by `timeoutSeconds`) until `/readyz` answers 200.
    public func start(timeoutSeconds: Double = 60) async throws {
        let executable = launcher.first.map { URL(fileURLWithPath: $0) } ?? self.executable
        let prefix: [String] = launcher.isEmpty ? [] : Array(launcher.dropFirst()) + [self.executable.path]
        let arguments = prefix + ["serve", "--port", "\(port)", "--database-url", databaseURL, "--log-level", "warning"] + extraArguments
        var variables = ProcessInfo.processInfo.environment
        variables["SPEAKERSYNC_ADMIN_KEY"] = adminKey
        variables["SPEAKERSYNC_EXIT_WITH_PARENT"] = "1" // a crashed run leaves no server behind
        let environment = variables
        let log = logFile
        // Spawned from a thread that lives as long as this object (see ParentThread).
        let started = try await parent.run { () throws -> Subprocess in
            let configuration = Subprocess.Configuration(executable: executable.path, arguments: arguments, environment: environment)
            return try log.map { try Subprocess(configuration, appendingOutputTo: $0) } ?? Subprocess(configuration)
        }
        process = started
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        while ContinuousClock.now < deadline {
            guard started.isRunning else {
                throw Failure(description: "speakersync serve ended with \(started.exit.map(String.init(describing:)) ?? "?") while starting")
            }
            if (try? SimpleHTTPClient.get(baseURL + "/readyz", timeoutSeconds: 2))?.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "the server was not ready within \(Int(timeoutSeconds)) s")
    }

    /// SIGKILL: no shutdown, no flush, exactly like a crash.
    public func kill() {
        guard let process, process.isRunning else { return }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then waits for the process to exit; its exit status.
    @discardableResult
    public func terminate() -> Int32 {
        guard let process else { return 0 }
        guard process.isRunning else { return process.terminationStatus }
        process.signal(SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }

    public var isRunning: Bool { process?.isRunning == true }

    /// SIGSTOP: the process keeps its sockets and answers nothing (a long GC pause, a stuck VM).
    public func pause() {
        guard let process, process.isRunning else { return }
        process.signal(SIGSTOP)
    }

    /// SIGCONT after `pause()`.
    public func resume() {
        guard let process, process.isRunning else { return }
        process.signal(SIGCONT)
    }

    /// The provider worker processes, from the admin's view of `/healthz`.
    public func providerWorkers() -> [(pid: pid_t, plugin: String)] {
        guard let response = try? SimpleHTTPClient.get(baseURL + "/healthz", token: adminKey, timeoutSeconds: 5),
              let object = response.json() as? [String: Any],
              let workers = object["provider_workers"] as? [[String: Any]] else { return [] }
        return workers.compactMap { worker in
            guard let pid = (worker["pid"] as? NSNumber)?.int32Value else { return nil }
            return (pid, worker["plugin"] as? String ?? "")
        }
    }
}
