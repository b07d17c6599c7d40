import Foundation
import SpeakerManager
import Testing

@Suite struct UpsertTests {
    @Test func upsertInsertsWithTheIdAsNameAndTheClockAsTimestamps() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        let stored = try manager.upsertSpeaker(id: "speaker_1", currentEmbedding: basis(0).map { $0 * 4 }, durationSeconds: 15.5)
        #expect(stored.name == "speaker_1")
        #expect(stored.createdAt == clock.now)
        #expect(stored.updatedAt == clock.now)
        #expect(stored.updateCount == 1)
        #expect(stored.currentEmbedding == basis(0))
        #expect(manager.getSpeaker(for: "speaker_1") == stored)
    }

    @Test func upsertUpdatesDataButKeepsCreatedAtAndName() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        try manager.upsertSpeaker(id: "a", currentEmbedding: basis(0), durationSeconds: 1, name: "Alice")
        clock.advance(seconds: 30)
        let later = clock.now.addingTimeInterval(5)
        let stored = try manager.upsertSpeaker(
            id: "a", currentEmbedding: basis(1), durationSeconds: 9, updateCount: 4,
            createdAt: later, updatedAt: later)
        #expect(stored.name == "Alice")
        #expect(stored.createdAt == ManualClock.start)
        #expect(stored.updatedAt == later)
        #expect(stored.currentEmbedding == basis(1))
        #expect(stored.durationSeconds == 9)
        #expect(stored.updateCount == 4)
    }

    @Test func upsertCannotRevokePermanence() throws {
        let manager = try makeManager()
        try manager.upsertSpeaker(id: "a", currentEmbedding: basis(0), durationSeconds: 1, isPermanent: true)
        let stored = try manager.upsertSpeaker(id: "a", currentEmbedding: basis(1), durationSeconds: 2, isPermanent: false)
        #expect(stored.isPermanent)
        #expect(stored.currentEmbedding == basis(1))
        let raised = try manager.upsertSpeaker(id: "b", currentEmbedding: basis(2), durationSeconds: 1)
        #expect(!raised.isPermanent)
        #expect(try manager.upsertSpeaker(id: "b", currentEmbedding: basis(2), durationSeconds: 1, isPermanent: true).isPermanent)
    }

    @Test func upsertFromAValueTakesItsNameAndStatistics() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        _ = try manager.assign(basis(0), speechDurationSeconds: 3, confidence: 0.5)
        var edited = try #require(manager.getSpeaker(for: "1"))
        edited.name = "Alice"
        edited.durationSeconds = 100
        edited.createdAt = clock.now.addingTimeInterval(1000)
        edited.segmentCount = 4
        edited.confidenceSum = 2
        let stored = try manager.upsertSpeaker(edited)
        #expect(stored.name == "Alice")
        #expect(stored.durationSeconds == 100)
        #expect(stored.createdAt == ManualClock.start)
        #expect(stored.segmentCount == 4)
        #expect(stored.averageConfidence == 0.5)
    }

    @Test func upsertedNumericIdsMoveCreatedIdsPastThem() throws {
        let manager = try makeManager()
        try manager.upsertSpeaker(id: "12", currentEmbedding: basis(0), durationSeconds: 1)
        #expect(try manager.assignSpeaker(basis(1), speechDurationSeconds: 3)?.id == "13")
    }

    @Test func upsertRejectsAnEmptyIdAndImpossibleRecords() throws {
        let manager = try makeManager()
        let emptyID = #expect(throws: SpeakerManagerError.self) {
            try manager.upsertSpeaker(id: "", currentEmbedding: basis(0), durationSeconds: 1)
        }
        #expect(emptyID?.code == .invalidSpeakerID)
        let negativeCount = #expect(throws: SpeakerManagerError.self) {
            try manager.upsertSpeaker(id: "a", currentEmbedding: basis(0), durationSeconds: 1, updateCount: -1)
        }
        #expect(negativeCount?.code == .invalidSpeakerRecord)
        let negativeDuration = #expect(throws: SpeakerManagerError.self) {
            try manager.upsertSpeaker(id: "a", currentEmbedding: basis(0), durationSeconds: -1)
        }
        #expect(negativeDuration?.code == .invalidDuration)
        #expect(manager.speakerCount == 0)
    }
}
