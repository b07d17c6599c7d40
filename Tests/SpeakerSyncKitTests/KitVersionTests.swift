import Testing
@testable import SpeakerSyncKit

@Suite struct KitVersionTests {
    /// The release tag is `kit-<version>` and SwiftPM resolves plain semver tags (docs/client.md,
    /// "Versions"): the constant must be three numbers, nothing else.
    @Test func theVersionIsPlainSemver() {
        let parts = SpeakerSyncKitVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && UInt($0) != nil && ($0 == "0" || !$0.hasPrefix("0")) })
    }
}
