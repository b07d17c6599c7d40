import ChildProcesses
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync serve --log-format json`: every log line is one JSON object a shipper can parse.
struct ServeLogFormatTests {
    @Test func jsonLogsAreOneObjectPerLineWithTheRecordsFields() async throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("serve-json-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: logURL) }
        let log = try FileHandle(forWritingTo: logURL)
        var configuration = Subprocess.Configuration(
            executable: try CommandLineRun.executable.path,
            arguments: ["serve", "--port", "0", "--database-url", try TestCluster.freshDatabase(), "--auth", "off",
                        "--log-level", "info", "--log-format", "json"])
        configuration.standardError = .descriptor(log.fileDescriptor)
        let process = try Subprocess(configuration)
        try log.close()
        defer { if process.isRunning { process.signal(SIGKILL); process.waitUntilExit() } }

        // Up (it logs where it listens), then stopped the way an orchestrator stops it.
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline,
              !(try String(contentsOf: logURL, encoding: .utf8)).contains("SpeakerSync listening") {
            try await Task.sleep(for: .milliseconds(100))
        }
        process.signal(SIGTERM)
        let exit = try await Blocking.run { process.waitUntilExit() }
        #expect(exit.succeeded)

        let lines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").map(String.init)
        let records = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!records.isEmpty && records.count == lines.count, "lines that are not JSON objects: \(lines.filter { !$0.hasPrefix("{") })")
        for record in records {
            #expect(["timestamp", "level", "label", "message", "metadata"].allSatisfy { record[$0] != nil }, "\(record)")
            #expect((record["timestamp"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
        }
        let listening = try #require(records.first { $0["message"] as? String == "SpeakerSync listening" })
        #expect(listening["level"] as? String == "info" && listening["label"] as? String == "speakersync")
        let metadata = try #require(listening["metadata"] as? [String: Any])
        #expect((metadata["ws"] as? String)?.hasSuffix("/v1/listen") == true, "\(metadata)")
        #expect(records.contains { $0["message"] as? String == "shutting down" })
    }
}
