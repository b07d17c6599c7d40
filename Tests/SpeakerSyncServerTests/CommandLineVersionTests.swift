import Foundation
import Testing
import TestSupport
import SessionProtocol
@testable import SpeakerSyncServer

/// `speakersync --version`, run as a user would.
struct CommandLineVersionTests {
    @Test func versionNamesTheReleaseAndTheProtocol() async throws {
        let result = try await CommandLineRun.run(["--version"], timeoutSeconds: 60)
        #expect(result.status == 0)
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            == "speakersync \(SpeakerSyncApplication.version) (session protocol \(SessionInfo.protocolVersion))")
    }
}
