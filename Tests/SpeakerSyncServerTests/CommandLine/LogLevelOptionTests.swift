import Foundation
import Testing
import TestSupport

/// `--log-level` takes swift-log's levels only: a misspelt one is a usage error naming the levels,
/// on every command that has the option, rather than a server quietly logging at info.
struct LogLevelOptionTests {
    @Test(arguments: [
        ["serve", "--port", "0"], ["words", "missing.wav"], ["provider-worker", "--plugin", "x.so", "--parent-pid", "1", "--protocol", "1"],
        ["demo"], ["eval", "--audio", "x.wav", "--rttm", "x.rttm"],
    ])
    func anUnknownLevelIsRefusedWithTheLevelsThereAre(_ command: [String]) async throws {
        let result = try await CommandLineRun.run(command + ["--log-level", "verbose"], timeoutSeconds: 60)
        #expect(result.status == 64, "\(command): exit \(result.status)")
        #expect(result.standardError.contains("The value 'verbose' is invalid for '--log-level"), "\(command): \(result.standardError)")
        for level in ["trace", "debug", "info", "notice", "warning", "error", "critical"] {
            #expect(result.standardError.contains("- \(level)"), "\(command): \(level) not listed")
        }
    }

    /// A known level is taken: the command gets as far as its real work (here, the missing recording).
    @Test func aKnownLevelIsAccepted() async throws {
        let result = try await CommandLineRun.run(["words", "/nonexistent/recording.wav", "--log-level", "error"], timeoutSeconds: 60)
        #expect(result.status == 1)
        #expect(!result.standardError.contains("--log-level"), "\(result.standardError)")
        #expect(result.standardError.contains("/nonexistent/recording.wav"), "\(result.standardError)")
    }
}
