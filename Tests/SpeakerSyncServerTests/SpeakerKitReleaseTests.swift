import Logging
import PluginHost
import Testing
@testable import SpeakerSyncServer

/// A type no code has cast before, so casting it makes the Swift runtime scan the conformance records of
/// every image it has registered (a cached answer would hide the hazard).
private struct NeverCastBefore<Value> { var value: Value }
private protocol NeverConformedTo {}

/// speakerkit is written in Swift: loading it registers its metadata with this process's Swift runtime,
/// which keeps pointers to it for good. Releasing the registry must not unmap it (the host opens plugins
/// with RTLD_NODELETE). Before that, this test died with SIGSEGV in swift_conformsToProtocol, as a CI run
/// did in the middle of SpeakerKitOptionsTests.
@Suite struct SpeakerKitReleaseTests {
    @Test func dynamicCastsStaySoundAfterTheRegistryIsReleased() throws {
        do {
            let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(nil), logger: Logger(label: "test"))
            #expect(plugins.provider(id: "speakerkit") != nil, "\(plugins.failures)")
            _ = try plugins.makeInstance(providerID: "speakerkit", sessionID: "s", optionsJSON: "")
        }
        let value: Any = NeverCastBefore(value: 3)
        #expect((value as? NeverConformedTo) == nil)
        #expect((value as? CustomStringConvertible) == nil)
    }
}
