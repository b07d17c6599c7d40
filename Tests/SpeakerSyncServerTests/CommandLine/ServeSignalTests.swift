import ChildProcesses
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync serve` stopped while it is still starting, as an orchestrator may: the SIGTERM is
/// not lost (the server once ran on for ever when it came between its start and its wait), and it
/// stops cleanly as soon as it has started.
struct ServeSignalTests {
    @Test func aSIGTERMDuringTheStartStopsTheServerCleanlyOnceStarted() async throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("serve-signal-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: logURL) }
        let log = try FileHandle(forWritingTo: logURL)
        var configuration = Subprocess.Configuration(
            executable: try CommandLineRun.executable.path,
            arguments: ["serve", "--port", "0", "--database-url", try TestCluster.freshDatabase(), "--auth", "off", "--log-level", "info"])
        configuration.standardError = .descriptor(log.fileDescriptor)
        let process = try Subprocess(configuration)
        try log.close()
        defer { if process.isRunning { process.signal(SIGKILL); process.waitUntilExit() } }

        // The first line it logs (a migration, a provider loading): it is starting, not yet listening.
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline, (try String(contentsOf: logURL, encoding: .utf8)).isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        process.signal(SIGTERM)
        let ended = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < ended { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning, "still running 120 s after SIGTERM")
        let text = try String(contentsOf: logURL, encoding: .utf8)
        #expect(process.exit?.succeeded == true, "\(text)")
        #expect(text.contains("SpeakerSync listening") && text.contains("shutting down"), "\(text)")
    }
}
