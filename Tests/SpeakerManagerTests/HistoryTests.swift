import Foundation
import SpeakerManager
import Testing

@Suite struct HistoryTests {
    @Test func historyKeepsTheFiftyMostRecentSegmentsDroppingTheOldest() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        var factory = EmbeddingFactory(seed: 20)
        let voice = factory.randomDirection()
        _ = try manager.assign(voice, speechDurationSeconds: 3)
        for _ in 2...60 {
            clock.advance(seconds: 1)
            let decision = try manager.assign(factory.direction(atDistance: 0.05, from: voice), speechDurationSeconds: 2)
            guard case .assigned("1", _, updated: true) = decision else {
                Issue.record("expected a profile update, got \(decision)")
                return
            }
        }
        let speaker = try #require(manager.getSpeaker(for: "1"))
        #expect(SpeakerManagerConfig.default.rawEmbeddingHistoryLimit == 50)
        #expect(speaker.rawEmbeddings.map(\.segmentId) == (11...60).map { SegmentID(UInt64($0)) })
        #expect(speaker.rawEmbeddings.first?.timestamp == ManualClock.start.addingTimeInterval(10))
        #expect(speaker.rawEmbeddings.last?.timestamp == clock.now)
        #expect(speaker.updateCount == 60)
    }

    @Test(arguments: [0, 1, 3])
    func historyLimitIsConfigurable(limit: Int) throws {
        let manager = try makeManager(SpeakerManagerConfig(rawEmbeddingHistoryLimit: limit))
        var factory = EmbeddingFactory(seed: 21)
        let voice = factory.randomDirection()
        for _ in 0..<5 {
            _ = try manager.assign(factory.direction(atDistance: 0.05, from: voice), speechDurationSeconds: 3)
        }
        let kept = try #require(manager.getSpeaker(for: "1")).rawEmbeddings.map(\.segmentId.rawValue)
        #expect(kept == Array((UInt64(6 - limit)..<6)))
    }

    @Test func historyHoldsTheUnitEmbeddingAtHalfPrecision() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 22)
        let embedding = factory.randomDirection(scale: 17)
        _ = try manager.assign(embedding, speechDurationSeconds: 3)
        let raw = try #require(manager.getSpeaker(for: "1")?.rawEmbeddings.first)
        let exact = try unitFloat(embedding)
        #expect(raw.halfPrecisionBits.count == dimension)
        for (stored, value) in zip(raw.embedding, exact) {
            // binary16 keeps 11 significant bits: relative error at most 2^-11, absolute 2^-25 below 2^-14.
            #expect(abs(stored - value) <= max(abs(value) * 0x1p-11, 0x1p-25))
        }
        #expect(abs(norm(raw.embedding) - 1) < 1e-3)
    }

    @Test func addRawEmbeddingKeepsTimestampOrder() throws {
        let start = ManualClock.start
        var speaker = Speaker(id: "a", currentEmbedding: basis(0), createdAt: start)
        for (segment, offset) in [(1, 0.0), (2, 10.0), (3, 5.0), (4, 10.0)] {
            try speaker.addRawEmbedding(RawEmbedding(
                segmentId: SegmentID(UInt64(segment)), embedding: basis(1), timestamp: start.addingTimeInterval(offset)))
        }
        #expect(speaker.rawEmbeddings.map(\.segmentId.rawValue) == [1, 3, 2, 4])

        // At the limit, an entry older than everything kept is the one dropped.
        try speaker.addRawEmbedding(
            RawEmbedding(segmentId: SegmentID(5), embedding: basis(1), timestamp: start.addingTimeInterval(-1)),
            historyLimit: 4)
        #expect(speaker.rawEmbeddings.map(\.segmentId.rawValue) == [1, 3, 2, 4])
        try speaker.addRawEmbedding(
            RawEmbedding(segmentId: SegmentID(6), embedding: basis(1), timestamp: start.addingTimeInterval(7)),
            historyLimit: 4)
        #expect(speaker.rawEmbeddings.map(\.segmentId.rawValue) == [3, 6, 2, 4])
    }

    @Test func addRawEmbeddingRejectsAnotherDimension() throws {
        var speaker = Speaker(id: "a", currentEmbedding: basis(0), createdAt: ManualClock.start)
        let raw = try RawEmbedding(segmentId: SegmentID(1), embedding: [1, 0, 0], timestamp: ManualClock.start)
        let error = #expect(throws: SpeakerManagerError.self) { try speaker.addRawEmbedding(raw) }
        #expect(error?.code == .dimensionMismatch)
        #expect(speaker.rawEmbeddings.isEmpty)
    }

    @Test func removeRawEmbeddingThenRecalculateUsesTheRemainingMean() throws {
        let start = ManualClock.start
        var speaker = Speaker(id: "a", currentEmbedding: basis(0), createdAt: start)
        for (segment, axis) in [(1, 1), (2, 2), (3, 3)] {
            try speaker.addRawEmbedding(RawEmbedding(
                segmentId: SegmentID(UInt64(segment)), embedding: basis(axis), timestamp: start))
        }
        #expect(speaker.currentEmbedding == basis(0))
        let removed = speaker.removeRawEmbedding(segmentId: SegmentID(2))
        #expect(removed?.embedding == basis(2))
        let again = speaker.removeRawEmbedding(segmentId: SegmentID(2))
        #expect(again == nil)
        speaker.recalculateMainEmbedding()
        let component = Float(0.5.squareRoot())
        var expected = [Float](repeating: 0, count: dimension)
        expected[1] = component
        expected[3] = component
        #expect(maxAbsDifference(speaker.currentEmbedding, expected) <= 1e-7)
    }
}
