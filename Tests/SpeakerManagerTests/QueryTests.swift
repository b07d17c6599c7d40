import Foundation
import SpeakerManager
import Testing

@Suite struct QueryTests {
    @Test func findSpeakerAnswersTheNearestWithinTheThreshold() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 50)
        let a = factory.randomDirection()
        let b = factory.randomDirection()
        try manager.upsertSpeaker(id: "a", currentEmbedding: a, durationSeconds: 1)
        try manager.upsertSpeaker(id: "b", currentEmbedding: b, durationSeconds: 1)
        let query = factory.direction(atDistance: 0.5, from: b)
        let distance = try managerDistance(b, query)

        #expect(try manager.findSpeaker(with: query) == SpeakerMatch(id: "b", distance: distance))
        #expect(try manager.findSpeaker(with: query, speakerThreshold: distance) == SpeakerMatch(id: "b", distance: distance))
        #expect(try manager.findSpeaker(with: query, speakerThreshold: distance.nextDown) == nil)
        #expect(try makeManager().findSpeaker(with: query) == nil)
    }

    @Test func findMatchingSpeakersListsEveryMatchNearestFirst() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 51)
        let center = factory.randomDirection()
        let distances = [0.5, 0.1, 0.3, 0.9]
        for (index, distance) in distances.enumerated() {
            try manager.upsertSpeaker(
                id: "s\(index)", currentEmbedding: factory.direction(atDistance: distance, from: center), durationSeconds: 1)
        }
        let matches = try manager.findMatchingSpeakers(with: center)
        #expect(matches.map(\.id) == ["s1", "s2", "s0"])
        #expect(matches.map(\.distance) == matches.map(\.distance).sorted())
        #expect(try manager.findMatchingSpeakers(with: center, speakerThreshold: 0.2).map(\.id) == ["s1"])
    }

    @Test func findSpeakersWherePredicateAnswersSortedIds() throws {
        let manager = try makeManager()
        for (id, seconds) in [("10", 6.0), ("2", 7.0), ("x", 1.0)] {
            try manager.upsertSpeaker(id: id, currentEmbedding: basis(0), durationSeconds: seconds)
        }
        #expect(manager.findSpeakers(where: { $0.durationSeconds > 5 }) == ["2", "10"])
        #expect(manager.findSpeakers { $0.durationSeconds > 100 }.isEmpty)
    }

    @Test func listingsAreSortedWithNumericIdsByValue() throws {
        let manager = try makeManager()
        for id in ["b", "10", "2", "a", "1"] {
            try manager.upsertSpeaker(id: id, currentEmbedding: basis(0), durationSeconds: 1)
        }
        #expect(manager.speakerIds == ["1", "2", "10", "a", "b"])
        #expect(manager.getCurrentSpeakerNames() == manager.speakerIds)
        #expect(manager.getSpeakerList().map(\.id) == manager.speakerIds)
        #expect(manager.getAllSpeakers().keys.sorted() == ["1", "10", "2", "a", "b"])
        #expect(manager.speakerCount == 5)
        #expect(manager.getSpeaker(for: "nobody") == nil)
    }

    @Test func renameSpeakerChangesOnlyTheName() throws {
        let manager = try makeManager()
        _ = try manager.assign(basis(0), speechDurationSeconds: 3)
        let before = try #require(manager.getSpeaker(for: "1"))
        #expect(manager.renameSpeaker("1", to: "Alice"))
        #expect(!manager.renameSpeaker("2", to: "Bob"))
        var expected = before
        expected.name = "Alice"
        #expect(manager.getSpeaker(for: "1") == expected)
        #expect(try manager.assignSpeaker(basis(0), speechDurationSeconds: 0.2)?.name == "Alice")
    }

    @Test func cosineDistanceSpansZeroToTwoAndIgnoresScale() {
        #expect(SpeakerManager.cosineDistance(basis(0), basis(0).map { $0 * 7 }) == 0)
        #expect(SpeakerManager.cosineDistance(basis(0), basis(1)) == 1)
        #expect(SpeakerManager.cosineDistance(basis(0), basis(0).map { -$0 }) == 2)
        #expect(abs(SpeakerManager.cosineDistance([1, 1], [1, 0]) - Float(1 - 0.5.squareRoot())) <= 1e-7)
        #expect(SpeakerManager.cosineDistance([1, 0], [1, 0, 0]) == .infinity)
        #expect(SpeakerManager.cosineDistance([0, 0], [1, 0]) == .infinity)
        #expect(SpeakerManager.cosineDistance([], []) == .infinity)
        #expect(SpeakerManager.cosineDistance([.nan, 0], [1, 0]) == .infinity)
    }
}
