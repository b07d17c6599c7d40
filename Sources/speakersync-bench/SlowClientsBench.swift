import ArgumentParser
import FaultInjection
import Foundation
import Logging

/// `speakersync-bench slow-clients`: what clients that send as fast as they can and never read cost
/// the server, and whether it gives the memory back (docs/reliability.md). Runs a release server on a
/// PostgreSQL of its own; prints resident sizes; asserts nothing.
struct SlowClientsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slow-clients",
        abstract: "Server memory under never-reading clients (1, then N at once): before, peak, and 10 s after they are gone.")

    @Option(help: "never-reading clients at once in the second round") var clients = 10
    @Option(help: "seconds each client floods") var seconds = 20.0

    func run() async throws {
        var logger = Logger(label: "slow-clients")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-slow-clients-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let postgres = try PostgresUnderTest(folder: folder.appendingPathComponent("postgres"), logger: logger)
        defer { postgres.stop() }
        let server = ServerUnderTest(executable: try ServerUnderTest.siblingExecutable(), databaseURL: postgres.connectionString,
                                     port: try FaultRun.freePort(), adminKey: "slow-clients-admin-key-0123456789abcdef")
        try await server.start()
        defer { server.kill() }
        guard let pid = server.processID else { throw ExitCode(1) }
        print("clients  before   peak     10 s after  (server resident MiB; each client floods \(Int(seconds)) s and is cut off as slow_reader)")
        for count in [1, clients] {
            let token = try FaultRun.deviceToken(server, device: "never-reads-\(count)")
            try await Task.sleep(for: .seconds(3))
            let before = ProcessStatus.residentBytes(of: pid) ?? 0
            let sampler = ResidentSampler(process: { pid })
            sampler.start()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask { _ = try? NeverReadingClient.flood(port: server.port, token: token, seconds: seconds) }
                }
            }
            // The server cuts them off after its grace period (10 s), then gives memory back.
            try await Task.sleep(for: .seconds(12))
            let peak = sampler.stop()
            try await Task.sleep(for: .seconds(10))
            let after = ProcessStatus.residentBytes(of: pid) ?? 0
            func mib(_ bytes: Int) -> String { String(format: "%6.0f", Double(bytes) / 1_048_576) }
            print(String(format: "%7d", count) + "  \(mib(before))   \(mib(peak))   \(mib(after))")
        }
    }
}

