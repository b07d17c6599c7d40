import ArgumentParser
import FaultInjection
import Foundation
import Logging
import SpeakerSyncClient

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
        print("clients  sent MiB  cut 4008  before   peak   10 s after  back within 16 MiB  (server resident MiB; each client floods words for up to \(Int(seconds)) s, never reading)")
        for count in [1, clients] {
            // A device each (a device may run 4 sessions at once); each token is its device's.
            let devices = (0..<count).map { "never-reads-\(count)-\($0)" }
            let tokens = try devices.map { try FaultRun.deviceToken(server, device: $0) }
            try await Task.sleep(for: .seconds(3))
            let before = ProcessStatus.residentBytes(of: pid) ?? 0
            let cutBefore = try Self.slowReaderCloses(server)
            let sampler = ResidentSampler(process: { pid })
            sampler.start()
            // A flood that fails (refused, never started) is reported, not dropped: it would flatter the figure.
            let outcomes = await withTaskGroup(of: Result<Int, any Error>.self) { group in
                for (device, token) in zip(devices, tokens) {
                    group.addTask { Result { try NeverReadingClient.flood(port: server.port, token: token, seconds: seconds, deviceID: device) } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failures = outcomes.compactMap { if case .failure(let error) = $0 { "\(error)" } else { nil } }
            guard failures.isEmpty else {
                print("flood failed: \(failures)")
                throw ExitCode(1)
            }
            let sentBytes = outcomes.reduce(0) { $0 + ((try? $1.get()) ?? 0) } * NeverReadingClient.bytesPerMessage
            // The clients have closed: the resident size 10 s later, and when it came back within
            // 16 MiB of where it was (polled for up to a minute).
            let closed = ContinuousClock.now
            var after = 0
            var returnedSeconds: Double?
            while ContinuousClock.now - closed < .seconds(60) {
                try await Task.sleep(for: .milliseconds(500))
                let now = ProcessStatus.residentBytes(of: pid) ?? 0
                let elapsed = (ContinuousClock.now - closed).seconds
                if after == 0, elapsed >= 10 { after = now }
                if returnedSeconds == nil, now <= before + (16 << 20) { returnedSeconds = elapsed }
                if after != 0, returnedSeconds != nil { break }
            }
            let peak = sampler.stop()
            func mib(_ bytes: Int) -> String { String(format: "%6.0f", Double(bytes) / 1_048_576) }
            // Sessions the server cut off as slow_reader (a client whose sends stall gives up and closes first).
            let cut = try Self.slowReaderCloses(server) - cutBefore
            print(String(format: "%7d  %8.0f  %8d", count, Double(sentBytes) / 1_048_576, cut) + "  \(mib(before))   \(mib(peak))   \(mib(after))      "
                  + (returnedSeconds.map { String(format: "%.1f s", $0) } ?? "not within 60 s"))
            if cut != count { print("  \(count - cut) of \(count) sessions ended before the server cut them off (the client gave up first)") }
        }
    }

    /// Sessions the server closed with 4008 so far (its /metrics).
    static func slowReaderCloses(_ server: ServerUnderTest) throws -> Int {
        let text = try SimpleHTTPClient.get(server.baseURL + "/metrics", token: server.adminKey).text
        return text.split(separator: "\n")
            .filter { $0.hasPrefix("speakersync_sessions_ended_total{") && $0.contains("close_code=\"4008\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0) { $0 + Int($1) }
    }
}
