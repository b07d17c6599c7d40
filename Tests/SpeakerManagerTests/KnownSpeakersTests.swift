import Foundation
import SpeakerManager
import Testing

@Suite struct KnownSpeakersTests {
    let start = ManualClock.start

    func known(_ id: String, _ embedding: [Float], name: String? = nil, seconds: Double = 10, permanent: Bool = false)
        -> Speaker
    {
        Speaker(
            id: id, name: name, currentEmbedding: embedding, durationSeconds: seconds, createdAt: start,
            isPermanent: permanent)
    }

    /// A manager holding "alice" (permanent when asked) and "bob", both created from basis vectors.
    func populated(alicePermanent: Bool) throws -> SpeakerManager {
        let manager = try makeManager()
        try manager.initializeKnownSpeakers([
            known("alice", basis(0), name: "Alice", permanent: alicePermanent), known("bob", basis(1), name: "Bob"),
        ])
        return manager
    }

    @Test func knownSpeakersAreRecognisedByIdAndName() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 30)
        let aliceVoice = factory.randomDirection()
        let summary = try manager.initializeKnownSpeakers([known("alice", aliceVoice, name: "Alice")])
        #expect(summary.inserted == ["alice"])
        let speaker = try #require(try manager.assignSpeaker(
            factory.direction(atDistance: 0.3, from: aliceVoice), speechDurationSeconds: 3))
        #expect(speaker.id == "alice")
        #expect(speaker.name == "Alice")
        #expect(abs(norm(speaker.currentEmbedding) - 1) < 1e-6)
    }

    @Test func skipIsTheDefaultModeAndKeepsExistingSpeakers() throws {
        let manager = try populated(alicePermanent: false)
        let summary = try manager.initializeKnownSpeakers([known("alice", basis(5), name: "Other"), known("carol", basis(2))])
        #expect(summary.skipped == ["alice"])
        #expect(summary.inserted == ["carol"])
        #expect(manager.getSpeaker(for: "alice")?.name == "Alice")
        #expect(manager.getSpeaker(for: "alice")?.currentEmbedding == basis(0))
    }

    @Test func overwriteReplacesExistingButNotPreservedPermanentSpeakers() throws {
        let manager = try populated(alicePermanent: true)
        let summary = try manager.initializeKnownSpeakers(
            [known("alice", basis(5), name: "Other"), known("bob", basis(6), name: "Robert")], mode: .overwrite)
        #expect(summary.skipped == ["alice"])
        #expect(summary.overwritten == ["bob"])
        #expect(manager.getSpeaker(for: "alice")?.name == "Alice")
        #expect(manager.getSpeaker(for: "bob")?.name == "Robert")
        #expect(manager.getSpeaker(for: "bob")?.currentEmbedding == basis(6))
    }

    @Test func overwriteWithoutPreservationReplacesPermanentSpeakersToo() throws {
        let manager = try populated(alicePermanent: true)
        let summary = try manager.initializeKnownSpeakers(
            [known("alice", basis(5), name: "Other")], mode: .overwrite, preserveIfPermanent: false)
        #expect(summary.overwritten == ["alice"])
        let alice = try #require(manager.getSpeaker(for: "alice"))
        #expect(alice.name == "Other")
        #expect(alice.isPermanent == false)
    }

    @Test func mergeFoldsTheKnownSpeakerIntoTheExistingOne() throws {
        let manager = try populated(alicePermanent: false)
        let summary = try manager.initializeKnownSpeakers([known("bob", basis(2), name: "Robert", seconds: 30)], mode: .merge)
        #expect(summary.merged == ["bob"])
        let bob = try #require(manager.getSpeaker(for: "bob"))
        #expect(bob.name == "Robert")
        #expect(bob.durationSeconds == 40)
        #expect(bob.updateCount == 2)
        // Neither had a history: the profile is the duration-weighted mean (10 s of basis 1, 30 s of basis 2).
        var expected = [Float](repeating: 0, count: dimension)
        expected[1] = Float(0.25 / (0.25 * 0.25 + 0.75 * 0.75).squareRoot())
        expected[2] = Float(0.75 / (0.25 * 0.25 + 0.75 * 0.75).squareRoot())
        #expect(maxAbsDifference(bob.currentEmbedding, expected) <= 1e-7)
    }

    @Test func mergeLeavesPreservedPermanentSpeakersAlone() throws {
        let manager = try populated(alicePermanent: true)
        let before = manager.getSpeaker(for: "alice")
        let summary = try manager.initializeKnownSpeakers([known("alice", basis(2), name: "Other")], mode: .merge)
        #expect(summary.skipped == ["alice"])
        #expect(manager.getSpeaker(for: "alice") == before)

        let overridden = try manager.initializeKnownSpeakers(
            [known("alice", basis(2), name: "Other")], mode: .merge, preserveIfPermanent: false)
        #expect(overridden.merged == ["alice"])
        #expect(manager.getSpeaker(for: "alice")?.name == "Other")
        #expect(manager.getSpeaker(for: "alice")?.isPermanent == true)
    }

    @Test func resetClearsOtherSpeakersAndKeepsPreservedPermanentOnes() throws {
        let manager = try populated(alicePermanent: true)
        let summary = try manager.initializeKnownSpeakers(
            [known("alice", basis(7), name: "Other"), known("carol", basis(2))], mode: .reset)
        #expect(summary.removedByReset == ["bob"])
        #expect(summary.skipped == ["alice"])
        #expect(summary.inserted == ["carol"])
        #expect(manager.speakerIds == ["alice", "carol"])
        #expect(manager.getSpeaker(for: "alice")?.name == "Alice")
    }

    @Test func resetWithoutPreservationStartsFromNothing() throws {
        let manager = try populated(alicePermanent: true)
        let summary = try manager.initializeKnownSpeakers([known("carol", basis(2))], mode: .reset, preserveIfPermanent: false)
        #expect(summary.removedByReset == ["alice", "bob"])
        #expect(manager.speakerIds == ["carol"])
    }

    @Test func numericKnownIdsMoveCreatedIdsPastThem() throws {
        let manager = try makeManager()
        try manager.initializeKnownSpeakers([known("7", basis(0)), known("3", basis(1))])
        let created = try manager.assignSpeaker(basis(2), speechDurationSeconds: 3)
        #expect(created?.id == "8")
    }

    @Test func oneInvalidKnownSpeakerRejectsTheWholeBatch() throws {
        let manager = try makeManager()
        let error = #expect(throws: SpeakerManagerError.self) {
            try manager.initializeKnownSpeakers([known("ok", basis(0)), known("bad", [1, 2, 3])])
        }
        #expect(error?.code == .dimensionMismatch)
        #expect(manager.speakerCount == 0)
    }

    @Test func knownHistoriesAreCappedToTheMostRecent() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        let raws = try (1...60).map {
            try RawEmbedding(
                segmentId: SegmentID(UInt64($0)), embedding: basis(0), timestamp: start.addingTimeInterval(Double(61 - $0)))
        }
        try manager.initializeKnownSpeakers([
            Speaker(id: "alice", currentEmbedding: basis(0), createdAt: start, rawEmbeddings: raws)
        ])
        let kept = try #require(manager.getSpeaker(for: "alice")).rawEmbeddings.map(\.segmentId.rawValue)
        #expect(kept == Array((1...50).reversed()))
        // New segments are numbered above every segment kept.
        clock.advance(seconds: 100)
        _ = try manager.assign(basis(0), speechDurationSeconds: 3)
        #expect(manager.getSpeaker(for: "alice")?.rawEmbeddings.last?.segmentId == SegmentID(51))
    }
}
