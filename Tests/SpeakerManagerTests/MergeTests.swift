import Foundation
import SpeakerManager
import Testing

@Suite struct MergeTests {
    /// Speakers "1" and "2" created by assignment, each with a history of `segments` entries.
    func twoSpeakers(segments: Int = 3, clock: ManualClock = ManualClock()) throws -> (SpeakerManager, ManualClock) {
        let manager = try makeManager(clock: clock)
        var factory = EmbeddingFactory(seed: 40)
        let voices = [factory.randomDirection(), factory.randomDirection()]
        for voice in voices {
            for _ in 0..<segments {
                _ = try manager.assign(factory.direction(atDistance: 0.05, from: voice), speechDurationSeconds: 2)
                clock.advance(seconds: 1)
            }
        }
        return (manager, clock)
    }

    @Test func mergeCombinesHistoriesDurationsAndCountsAndRemovesTheSource() throws {
        let (manager, clock) = try twoSpeakers()
        let source = try #require(manager.getSpeaker(for: "2"))
        let destination = try #require(manager.getSpeaker(for: "1"))
        #expect(manager.mergeSpeaker("2", into: "1", mergedName: "Bob"))

        let merged = try #require(manager.getSpeaker(for: "1"))
        #expect(manager.speakerIds == ["1"])
        #expect(merged.name == "Bob")
        #expect(merged.durationSeconds == source.durationSeconds + destination.durationSeconds)
        #expect(merged.updateCount == source.updateCount + destination.updateCount)
        #expect(merged.segmentCount == 6)
        #expect(merged.rawEmbeddings.map(\.segmentId) == destination.rawEmbeddings.map(\.segmentId) + source.rawEmbeddings.map(\.segmentId))
        #expect(merged.createdAt == destination.createdAt)
        #expect(merged.updatedAt == clock.now)
        let mean = try #require(SpeakerUtilities.averageEmbeddings(merged.rawEmbeddings.map(\.embedding)))
        #expect(merged.currentEmbedding == mean)
    }

    @Test func mergeKeepsTheDestinationNameWithoutAMergedName() throws {
        let (manager, _) = try twoSpeakers()
        #expect(manager.mergeSpeaker("2", into: "1"))
        #expect(manager.getSpeaker(for: "1")?.name == "Speaker 1")
    }

    @Test func mergeStopsWhenTheSourceIsPermanentUnlessOverridden() throws {
        let (manager, _) = try twoSpeakers()
        #expect(manager.makeSpeakerPermanent("2"))
        #expect(!manager.mergeSpeaker("2", into: "1"))
        #expect(manager.speakerCount == 2)
        #expect(manager.mergeSpeaker("2", into: "1", stopIfPermanent: false))
        #expect(manager.speakerIds == ["1"])
        #expect(manager.getSpeaker(for: "1")?.isPermanent == false)
    }

    @Test func mergeIntoAPermanentDestinationIsAllowed() throws {
        let (manager, _) = try twoSpeakers()
        manager.makeSpeakerPermanent("1")
        #expect(manager.mergeSpeaker("2", into: "1"))
        #expect(manager.getSpeaker(for: "1")?.isPermanent == true)
    }

    @Test func mergeRefusesTheSameSpeakerOrAMissingOne() throws {
        let (manager, _) = try twoSpeakers()
        #expect(!manager.mergeSpeaker("1", into: "1"))
        #expect(!manager.mergeSpeaker("9", into: "1"))
        #expect(!manager.mergeSpeaker("1", into: "9"))
        #expect(manager.speakerIds == ["1", "2"])
    }

    @Test func mergedHistoryKeepsTheMostRecentEntries() throws {
        let (manager, _) = try twoSpeakers(segments: 30)
        #expect(manager.mergeSpeaker("1", into: "2"))
        let merged = try #require(manager.getSpeaker(for: "2"))
        // Speaker 1's segments 1–30 came first; the 50 most recent are 11–60.
        #expect(merged.rawEmbeddings.map(\.segmentId.rawValue) == Array(11...60))
    }

    @Test func reassignSegmentMovesTheEmbeddingAndItsDuration() throws {
        let (manager, clock) = try twoSpeakers()
        let moved = try #require(manager.getSpeaker(for: "1")?.rawEmbeddings[1])
        clock.advance(seconds: 10)
        #expect(manager.reassignSegment(segmentId: moved.segmentId, from: "1", to: "2"))
        let source = try #require(manager.getSpeaker(for: "1"))
        let destination = try #require(manager.getSpeaker(for: "2"))
        #expect(!source.rawEmbeddings.contains { $0.segmentId == moved.segmentId })
        #expect(destination.rawEmbeddings.contains(moved))
        #expect(source.durationSeconds == 4)
        #expect(destination.durationSeconds == 8)
        #expect(source.currentEmbedding == SpeakerUtilities.averageEmbeddings(source.rawEmbeddings.map(\.embedding)))
        #expect(destination.currentEmbedding == SpeakerUtilities.averageEmbeddings(destination.rawEmbeddings.map(\.embedding)))
        #expect(source.updatedAt == clock.now)
        #expect(destination.updatedAt == clock.now)
        #expect(destination.rawEmbeddings.map(\.timestamp) == destination.rawEmbeddings.map(\.timestamp).sorted())

        #expect(!manager.reassignSegment(segmentId: moved.segmentId, from: "1", to: "2"))
        #expect(!manager.reassignSegment(segmentId: moved.segmentId, from: "2", to: "2"))
        #expect(!manager.reassignSegment(segmentId: moved.segmentId, from: "2", to: "9"))
    }

    @Test func mergeablePairsIncludeDistancesUpToTheThreshold() throws {
        var factory = EmbeddingFactory(seed: 41)
        let voice = factory.randomDirection()
        let close = factory.direction(atDistance: 0.4, from: voice)
        let distance = try managerDistance(voice, close)
        let manager = try makeManager()
        try manager.upsertSpeaker(id: "a", currentEmbedding: voice, durationSeconds: 1)
        try manager.upsertSpeaker(id: "b", currentEmbedding: close, durationSeconds: 1)
        try manager.upsertSpeaker(id: "c", currentEmbedding: factory.randomDirection(), durationSeconds: 1)

        #expect(try manager.findMergeablePairs(speakerThreshold: distance) == [
            MergeablePair(speakerToMerge: "b", destination: "a", distance: distance)
        ])
        #expect(try manager.findMergeablePairs(speakerThreshold: distance.nextDown).isEmpty)
    }

    @Test func mergeablePairsMergeIntoThePermanentSpeakerAndSkipBothPermanentPairs() throws {
        let manager = try makeManager()
        try manager.upsertSpeaker(id: "a", currentEmbedding: basis(0), durationSeconds: 1)
        try manager.upsertSpeaker(id: "b", currentEmbedding: basis(0), durationSeconds: 1, isPermanent: true)
        try manager.upsertSpeaker(id: "c", currentEmbedding: basis(0), durationSeconds: 1, isPermanent: true)

        #expect(try manager.findMergeablePairs() == [
            MergeablePair(speakerToMerge: "a", destination: "b", distance: 0),
            MergeablePair(speakerToMerge: "a", destination: "c", distance: 0),
        ])
        #expect(try manager.findMergeablePairs(excludeIfBothPermanent: false) == [
            MergeablePair(speakerToMerge: "a", destination: "b", distance: 0),
            MergeablePair(speakerToMerge: "a", destination: "c", distance: 0),
            MergeablePair(speakerToMerge: "b", destination: "c", distance: 0),
        ])
    }
}
