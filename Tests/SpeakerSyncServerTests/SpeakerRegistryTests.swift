import SpeakerSyncStore
import Testing
@testable import SpeakerSyncServer

@Suite struct SpeakerRegistryTests {
    @Test func labelsFollowFirstAppearanceAndStayStable() {
        var registry = SpeakerRegistry()
        let a = registry.label(provider: "device", key: "speaker90", heardAtSeconds: 6.7)
        let b = registry.label(provider: "device", key: "speaker91", heardAtSeconds: 7.5)
        let again = registry.label(provider: "device", key: "speaker90", heardAtSeconds: 8.3)
        #expect(a.label == "Speaker 1" && a.created != nil)
        #expect(b.label == "Speaker 2" && b.created?.firstSeenSeconds == 7.5)
        #expect(again.label == "Speaker 1" && again.created == nil)
    }

    @Test func sameKeyOfAnotherProviderIsAnotherSpeaker() {
        var registry = SpeakerRegistry()
        _ = registry.label(provider: "energy", key: "0", heardAtSeconds: 0)
        let other = registry.label(provider: "device", key: "0", heardAtSeconds: 1)
        #expect(other.label == "Speaker 2")
    }

    @Test func restoredRegistryContinuesNumberingAndKeys() {
        var first = SpeakerRegistry()
        _ = first.label(provider: "device", key: "A", heardAtSeconds: 0)
        _ = first.label(provider: "device", key: "B", heardAtSeconds: 1)
        var resumed = SpeakerRegistry(speakers: first.speakers, keyLabels: first.keyLabels)
        #expect(resumed.label(provider: "device", key: "B", heardAtSeconds: 40).label == "Speaker 2")
        #expect(resumed.label(provider: "device", key: "C", heardAtSeconds: 41).label == "Speaker 3")
    }

    @Test func mergeForwardsFutureTurnsAndKeepsTheName() throws {
        var registry = SpeakerRegistry()
        _ = registry.label(provider: "device", key: "A", heardAtSeconds: 0)
        _ = registry.label(provider: "device", key: "B", heardAtSeconds: 1)
        _ = try registry.rename("Speaker 2", to: "Alice")
        let merged = try registry.merge("Speaker 2", into: "Speaker 1")
        #expect(merged.from == "Speaker 2" && merged.into == "Speaker 1")
        #expect(registry.label(provider: "device", key: "B", heardAtSeconds: 5).label == "Speaker 1")
        #expect(registry.name(for: "Speaker 2") == "Alice")
        #expect(registry.activeSpeakers.map(\.label) == ["Speaker 1"])
    }

    @Test func correctionsOfUnknownSpeakersAndSelfMergesAreRefused() throws {
        var registry = SpeakerRegistry()
        _ = registry.label(provider: "device", key: "A", heardAtSeconds: 0)
        #expect(throws: SpeakerRegistryError.self) { try registry.rename("Speaker 9", to: "Bob") }
        #expect(throws: SpeakerRegistryError.self) { try registry.merge("Speaker 1", into: "Speaker 1") }
        #expect(throws: SpeakerRegistryError.self) { try registry.rename("Speaker 1", to: "   ") }
        let renamed = try registry.rename("Speaker 1", to: " Bob ")
        #expect(renamed.displayName == "Bob")
    }
}
