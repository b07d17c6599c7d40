import Foundation
import SpeakerManager
import Testing
import DeterministicRandom

@Suite struct SnapshotTests {
    /// A manager after a seeded stream of segments, with a permanent, renamed known speaker.
    func populated(clock: ManualClock) throws -> SpeakerManager {
        let manager = try makeManager(clock: clock)
        var factory = EmbeddingFactory(seed: 60)
        let voices = (0..<3).map { _ in factory.randomDirection() }
        try manager.upsertSpeaker(id: "alice", currentEmbedding: voices[0], durationSeconds: 20, isPermanent: true, name: "Alice")
        var generator = SeededRandom(seed: 61)
        for _ in 0..<40 {
            let voice = voices[Int.random(in: 0..<3, using: &generator)]
            _ = try manager.assign(
                factory.direction(atDistance: 0.15, from: voice), speechDurationSeconds: 2.5,
                confidence: Float.random(in: 0...1, using: &generator))
            clock.advance(seconds: 3)
        }
        return manager
    }

    @Test func snapshotSurvivesJSONAndTheRestoredManagerContinuesIdentically() throws {
        let clock = ManualClock()
        let original = try populated(clock: clock)
        let snapshot = original.snapshot()
        #expect(snapshot.speakers.map(\.id) == original.speakerIds)

        let json = try JSONEncoder().encode(snapshot)
        let decoded = try JSONDecoder().decode(SpeakerManagerSnapshot.self, from: json)
        #expect(decoded == snapshot)

        let restored = try makeManager(clock: clock)
        try restored.restore(decoded)
        #expect(restored.snapshot() == snapshot)
        #expect(restored.getAllSpeakers() == original.getAllSpeakers())

        var factory = EmbeddingFactory(seed: 62)
        for _ in 0..<5 {
            let newVoice = factory.randomDirection()
            #expect(try restored.assign(newVoice, speechDurationSeconds: 3) == original.assign(newVoice, speechDurationSeconds: 3))
        }
        #expect(restored.snapshot() == original.snapshot())
    }

    @Test func restoreRejectsAnotherDimensionOrVersionAndChangesNothing() throws {
        let clock = ManualClock()
        let source = try populated(clock: clock)
        let target = try makeManager(clock: clock)
        _ = try target.assign(basis(0), speechDurationSeconds: 3)
        let before = target.snapshot()

        var otherVersion = source.snapshot()
        otherVersion.formatVersion = 2
        var otherDimension = source.snapshot()
        otherDimension.embeddingDimension = 192
        var duplicated = source.snapshot()
        duplicated.speakers.append(duplicated.speakers[0])
        var broken = source.snapshot()
        broken.speakers[1].currentEmbedding[3] = .nan

        for (snapshot, expected) in [
            (otherVersion, SpeakerManagerError.Code.invalidSnapshot), (otherDimension, .invalidSnapshot),
            (duplicated, .invalidSnapshot), (broken, .nonFiniteEmbedding),
        ] {
            let error = #expect(throws: SpeakerManagerError.self) { try target.restore(snapshot) }
            #expect(error?.code == expected)
        }
        #expect(target.snapshot() == before)
    }

    @Test func restoreRaisesCountersAboveEveryIdPresent() throws {
        let manager = try makeManager()
        let raw = try RawEmbedding(segmentId: SegmentID(500), embedding: basis(0), timestamp: ManualClock.start)
        try manager.restore(SpeakerManagerSnapshot(
            embeddingDimension: dimension,
            speakers: [Speaker(id: "41", currentEmbedding: basis(0), createdAt: ManualClock.start, rawEmbeddings: [raw])],
            nextSpeakerNumber: 1, nextSegmentNumber: 1))
        let snapshot = manager.snapshot()
        #expect(snapshot.nextSpeakerNumber == 42)
        #expect(snapshot.nextSegmentNumber == 501)
        #expect(try manager.assignSpeaker(basis(1), speechDurationSeconds: 3)?.id == "42")
    }
}
