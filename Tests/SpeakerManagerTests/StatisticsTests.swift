import Foundation
import SpeakerManager
import Testing

@Suite struct StatisticsTests {
    @Test func emptyDatabaseHasZeroStatistics() throws {
        let statistics = try makeManager().statistics
        #expect(statistics == SpeakerStatistics(
            totalSpeakers: 0, permanentSpeakers: 0, speakersWithHistory: 0, totalRawEmbeddings: 0,
            totalDurationSeconds: 0, averageDurationSeconds: 0, averageConfidence: 0, storedEmbeddingBytes: 0))
    }

    @Test func statisticsAggregateEverySpeaker() throws {
        let manager = try makeManager()
        // Speaker 1: created (3 s, confidence 0.5), updated (2 s, 1.0), assigned without update (0.5 s, 0.75).
        _ = try manager.assign(basis(0), speechDurationSeconds: 3, confidence: 0.5)
        _ = try manager.assign(basis(0), speechDurationSeconds: 2, confidence: 1)
        _ = try manager.assign(basis(0), speechDurationSeconds: 0.5, confidence: 0.75)
        // Speaker 2: created (1.5 s, confidence 0.25), then made permanent.
        _ = try manager.assign(basis(1), speechDurationSeconds: 1.5, confidence: 0.25)
        manager.makeSpeakerPermanent("2")
        // A known speaker without history or segments.
        try manager.upsertSpeaker(id: "alice", currentEmbedding: basis(2), durationSeconds: 9)
        // Rejected segments count for nothing.
        _ = try manager.assign(basis(3), speechDurationSeconds: 0.5, confidence: 0)

        let statistics = manager.getGlobalSpeakerStats()
        #expect(statistics.totalSpeakers == 3)
        #expect(statistics.permanentSpeakers == 1)
        #expect(statistics.speakersWithHistory == 2)
        #expect(statistics.totalRawEmbeddings == 3)
        #expect(statistics.totalDurationSeconds == 3 + 2 + 0.5 + 1.5 + 9)
        #expect(statistics.averageDurationSeconds == 16.0 / 3)
        #expect(statistics.averageConfidence == (0.5 + 1 + 0.75 + 0.25) / 4)
        #expect(statistics.storedEmbeddingBytes == 3 * dimension * 4 + 3 * dimension * 2)
        #expect(manager.getSpeaker(for: "1")?.averageConfidence == 2.25 / 3)
        #expect(manager.getSpeaker(for: "alice")?.averageConfidence == nil)
    }
}
