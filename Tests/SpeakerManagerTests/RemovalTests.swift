import Foundation
import SpeakerManager
import Testing

@Suite struct RemovalTests {
    /// "a" (permanent), "b" and "c", last updated at start, start + 10 s and start + 20 s.
    func threeSpeakers() throws -> (SpeakerManager, ManualClock) {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        for (index, id) in ["a", "b", "c"].enumerated() {
            try manager.upsertSpeaker(
                id: id, currentEmbedding: basis(index), durationSeconds: Double(index + 1) * 4, isPermanent: id == "a")
            clock.advance(seconds: 10)
        }
        return (manager, clock)
    }

    @Test func removeSpeakerSparesPermanentSpeakersUnlessOverridden() throws {
        let (manager, _) = try threeSpeakers()
        #expect(manager.removeSpeaker("b"))
        #expect(!manager.removeSpeaker("b"))
        #expect(!manager.removeSpeaker("a"))
        #expect(manager.hasSpeaker("a"))
        #expect(manager.removeSpeaker("a", keepIfPermanent: false))
        #expect(manager.speakerIds == ["c"])
    }

    @Test func removeSpeakersInactiveSinceADateIsStrict() throws {
        let (manager, _) = try threeSpeakers()
        let cutoff = ManualClock.start.addingTimeInterval(10)
        #expect(manager.removeSpeakersInactive(since: cutoff).isEmpty)
        #expect(manager.removeSpeakersInactive(since: cutoff.addingTimeInterval(0.001)) == ["b"])
        #expect(manager.removeSpeakersInactive(since: cutoff, keepIfPermanent: false) == ["a"])
        #expect(manager.speakerIds == ["c"])
    }

    @Test func removeSpeakersInactiveForADurationUsesTheClock() throws {
        let (manager, clock) = try threeSpeakers()
        // Now is start + 30 s: "b" has been idle 20 s, "c" 10 s, "a" 30 s but is permanent.
        #expect(manager.removeSpeakersInactive(for: .seconds(15)) == ["b"])
        clock.advance(seconds: 100)
        #expect(manager.removeSpeakersInactive(for: .seconds(200)).isEmpty)
        #expect(manager.removeSpeakersInactive(for: .milliseconds(500), keepIfPermanent: false) == ["a", "c"])
        #expect(manager.speakerCount == 0)
    }

    @Test func removeSpeakersWherePredicateSparesPermanentByDefault() throws {
        let (manager, _) = try threeSpeakers()
        #expect(manager.removeSpeakers { $0.durationSeconds < 10 } == ["b"])
        #expect(manager.removeSpeakers(where: { $0.durationSeconds < 10 }, keepIfPermanent: false) == ["a"])
        #expect(manager.speakerIds == ["c"])
    }

    @Test func resetClearsEverythingAndRestartsNumberingAtOne() throws {
        let manager = try makeManager()
        for axis in 0..<3 { _ = try manager.assign(basis(axis), speechDurationSeconds: 3) }
        manager.makeSpeakerPermanent("3")
        #expect(manager.reset() == ["1", "2", "3"])
        #expect(manager.speakerCount == 0)
        #expect(try manager.assignSpeaker(basis(5), speechDurationSeconds: 3)?.id == "1")
    }

    @Test func resetKeepingPermanentSpeakersNumbersAboveThem() throws {
        let manager = try makeManager()
        for axis in 0..<4 { _ = try manager.assign(basis(axis), speechDurationSeconds: 3) }
        manager.makeSpeakerPermanent("2")
        #expect(manager.reset(keepIfPermanent: true) == ["1", "3", "4"])
        #expect(manager.speakerIds == ["2"])
        #expect(try manager.assignSpeaker(basis(9), speechDurationSeconds: 3)?.id == "3")
    }

    @Test func permanenceCanBeGrantedRevokedAndCleared() throws {
        let (manager, _) = try threeSpeakers()
        #expect(manager.permanentSpeakerIds == ["a"])
        #expect(manager.makeSpeakerPermanent("b"))
        #expect(!manager.makeSpeakerPermanent("zz"))
        #expect(manager.permanentSpeakerIds == ["a", "b"])
        #expect(manager.revokePermanence(from: "a"))
        #expect(!manager.revokePermanence(from: "zz"))
        #expect(manager.permanentSpeakerIds == ["b"])
        manager.resetPermanentFlags()
        #expect(manager.permanentSpeakerIds.isEmpty)
    }
}
