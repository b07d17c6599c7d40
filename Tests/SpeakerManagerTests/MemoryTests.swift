import Foundation
import SpeakerManager
import Testing

/// The product budget is at most 50 KB per tracked speaker; FluidAudio's `Float` history alone is
/// 256 × 50 × 4 B = 51 200 B. These tests account for what a full profile actually holds.
@Suite struct MemoryTests {
    static let budgetBytes = 50_000

    /// A speaker with a full history, built the way a stream builds it.
    func fullSpeaker() throws -> Speaker {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        var factory = EmbeddingFactory(seed: 70)
        let voice = factory.randomDirection()
        for _ in 0..<120 {
            _ = try manager.assign(factory.direction(atDistance: 0.05, from: voice), speechDurationSeconds: 2)
            clock.advance(seconds: 1)
        }
        let speaker = try #require(manager.getSpeaker(for: "1"))
        #expect(manager.speakerCount == 1)
        return speaker
    }

    @Test func fullHistoryStoresHalfPrecisionVectors() throws {
        let speaker = try fullSpeaker()
        let limit = SpeakerManagerConfig.default.rawEmbeddingHistoryLimit
        #expect(speaker.rawEmbeddings.count == limit)
        #expect(speaker.rawEmbeddings.allSatisfy { $0.halfPrecisionBits.count == dimension })
        let expected = dimension * MemoryLayout<Float>.size + limit * dimension * MemoryLayout<UInt16>.size
        #expect(speaker.storedEmbeddingBytes == expected)
        #expect(expected == 26_624)
        #expect(expected <= Self.budgetBytes)
        print("stored embedding bytes per speaker (256 dims, 50-entry history): \(speaker.storedEmbeddingBytes)")
    }

    @Test func structuralFootprintOfAFullSpeakerIsWithinBudget() throws {
        let speaker = try fullSpeaker()
        #expect(speaker.currentEmbedding.capacity >= dimension)
        #expect(speaker.rawEmbeddings.allSatisfy { $0.halfPrecisionBits.capacity >= dimension })
        let estimate = speaker.estimatedMemoryBytes
        #expect(estimate >= speaker.storedEmbeddingBytes)
        #expect(estimate <= Self.budgetBytes)
        print(
            "estimated footprint of a full speaker: \(estimate) B (Speaker \(MemoryLayout<Speaker>.stride) B inline, "
                + "RawEmbedding \(MemoryLayout<RawEmbedding>.stride) B × history capacity \(speaker.rawEmbeddings.capacity), "
                + "profile capacity \(speaker.currentEmbedding.capacity), "
                + "history vector capacity \(speaker.rawEmbeddings.map(\.halfPrecisionBits.capacity).max() ?? 0))")
    }
}
