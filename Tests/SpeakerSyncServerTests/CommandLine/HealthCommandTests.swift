import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `speakersync health`, the container HEALTHCHECK: exit 0 when /readyz says ready, 1 otherwise.
@Suite(.serialized) struct HealthCommandTests {
    @Test func aReadyServerExitsZeroWithItsStatus() async throws {
        let server = try EndToEndTests.TestServer()
        for url in [server.http, "ws://127.0.0.1:\(server.port)/v1/listen"] {
            let result = try await CommandLineRun.run(["health", "--url", url], timeoutSeconds: 60)
            #expect(result.status == 0, "\(url): \(result.standardOutput) \(result.standardError)")
            #expect(result.standardOutput == "ready: status ok, database ok\n", "\(url)")
        }
    }

    /// A stopping server (503 from /readyz), a hung one and a closed port are all "not healthy": exit 1, and why.
    @Test func aServerThatIsNotReadyOrNotThereExitsOne() async throws {
        let body = #"{"status":"stopping","database":"ok"}"#
        let stopping = try CannedHTTPListener(response: "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nRetry-After: 2\r\nConnection: close\r\n\r\n\(body)")
        defer { stopping.stop() }
        let notReady = try await CommandLineRun.run(["health", "--url", "http://127.0.0.1:\(stopping.port)"], timeoutSeconds: 60)
        #expect(notReady.status == 1)
        #expect(notReady.standardOutput == "not ready: HTTP 503: status stopping, database ok\n", "\(notReady.standardOutput)")

        let hung = try CannedHTTPListener(response: nil)
        defer { hung.stop() }
        let started = ContinuousClock.now
        let timedOut = try await CommandLineRun.run(["health", "--url", "http://127.0.0.1:\(hung.port)", "--timeout", "1"], timeoutSeconds: 60)
        #expect(timedOut.status == 1)
        #expect(timedOut.standardOutput.hasPrefix("unreachable: http://127.0.0.1:\(hung.port): "), "\(timedOut.standardOutput)")
        #expect(ContinuousClock.now - started < .seconds(30))

        let port = try ServerProcess.freePort()
        let closed = try await CommandLineRun.run(["health", "--url", "http://127.0.0.1:\(port)"], timeoutSeconds: 60)
        #expect(closed.status == 1)
        #expect(closed.standardOutput.contains("cannot connect to 127.0.0.1:\(port)"), "\(closed.standardOutput)")
    }
}
