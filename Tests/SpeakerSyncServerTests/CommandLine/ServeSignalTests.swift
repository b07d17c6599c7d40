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
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-signal-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let process = Process()
        process.executableURL = try CommandLineRun.executable
        process.arguments = ["serve", "--port", "0", "--database-url", try TestCluster.freshDatabase(), "--auth", "off", "--log-level", "info"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }

        // The first line it logs (a migration, a provider loading): it is starting, not yet listening.
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline, (try String(contentsOf: log, encoding: .utf8)).isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        kill(process.processIdentifier, SIGTERM)
        let ended = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < ended { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning, "still running 120 s after SIGTERM")
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("SpeakerSync listening") && text.contains("shutting down"), "\(text)")
    }
}
