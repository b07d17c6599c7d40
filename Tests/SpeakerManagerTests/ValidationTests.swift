import Foundation
import SpeakerManager
import Testing

@Suite struct ValidationTests {
    func code(_ body: () throws -> Void) -> SpeakerManagerError.Code? {
        do {
            try body()
            return nil
        } catch let error as SpeakerManagerError {
            #expect(!error.message.isEmpty)
            return error.code
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func embeddingsOfTheWrongLengthAreRejected() throws {
        let manager = try makeManager()
        #expect(code { _ = try manager.assign(basis(0, dimension: 255), speechDurationSeconds: 3) } == .dimensionMismatch)
        #expect(code { _ = try manager.assign([], speechDurationSeconds: 3) } == .dimensionMismatch)
        #expect(code { _ = try manager.findSpeaker(with: basis(0, dimension: 512)) } == .dimensionMismatch)
        #expect(manager.speakerCount == 0)
    }

    @Test(arguments: [Float.nan, .infinity, -.infinity])
    func nonFiniteEmbeddingsAreRejected(value: Float) throws {
        let manager = try makeManager()
        var embedding = basis(0)
        embedding[17] = value
        #expect(code { _ = try manager.assign(embedding, speechDurationSeconds: 3) } == .nonFiniteEmbedding)
        #expect(code { _ = try manager.findMatchingSpeakers(with: embedding) } == .nonFiniteEmbedding)
        #expect(code { try manager.upsertSpeaker(id: "a", currentEmbedding: embedding, durationSeconds: 1) } == .nonFiniteEmbedding)
        #expect(manager.speakerCount == 0)
    }

    @Test func zeroEmbeddingsAreRejected() throws {
        let manager = try makeManager()
        let zero = [Float](repeating: 0, count: dimension)
        #expect(code { _ = try manager.assign(zero, speechDurationSeconds: 3) } == .zeroNormEmbedding)
        #expect(code { _ = try RawEmbedding(segmentId: SegmentID(1), embedding: zero, timestamp: ManualClock.start) } == .zeroNormEmbedding)
        // The smallest subnormal still has a direction.
        #expect(try manager.assign(basis(0).map { $0 * .leastNonzeroMagnitude }, speechDurationSeconds: 3) == .created(id: "1", nearest: nil))
    }

    @Test func invalidDurationsConfidencesAndThresholdsAreRejected() throws {
        let manager = try makeManager()
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: -0.1) } == .invalidDuration)
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: .nan) } == .invalidDuration)
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: .infinity) } == .invalidDuration)
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: 3, confidence: 1.01) } == .invalidConfidence)
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: 3, confidence: -0.01) } == .invalidConfidence)
        #expect(code { _ = try manager.assign(basis(0), speechDurationSeconds: 3, speakerThreshold: 2.5) } == .invalidThreshold)
        #expect(code { _ = try manager.findMergeablePairs(speakerThreshold: .nan) } == .invalidThreshold)
        #expect(manager.speakerCount == 0)
    }

    @Test func invalidConfigurationsAreRejectedByName() {
        let cases: [(SpeakerManagerConfig, String)] = [
            (SpeakerManagerConfig(speakerThreshold: -0.1), "speakerThreshold"),
            (SpeakerManagerConfig(speakerThreshold: .nan), "speakerThreshold"),
            (SpeakerManagerConfig(embeddingThreshold: 2.1), "embeddingThreshold"),
            (SpeakerManagerConfig(minSpeechDurationSeconds: -1), "minSpeechDurationSeconds"),
            (SpeakerManagerConfig(minEmbeddingUpdateDurationSeconds: .infinity), "minEmbeddingUpdateDurationSeconds"),
            (SpeakerManagerConfig(embeddingUpdateAlpha: 1.5), "embeddingUpdateAlpha"),
            (SpeakerManagerConfig(rawEmbeddingHistoryLimit: -1), "rawEmbeddingHistoryLimit"),
            (SpeakerManagerConfig(embeddingDimension: 0), "embeddingDimension"),
        ]
        for (config, field) in cases {
            let error = #expect(throws: SpeakerManagerError.self) { try makeManager(config) }
            #expect(error?.code == .invalidConfig)
            #expect(error?.message.hasPrefix(field) == true, "\(error?.message ?? "") should name \(field)")
        }
        #expect(throws: Never.self) { try SpeakerManagerConfig.default.validate() }
    }

    @Test func defaultsAreFluidAudios() {
        let config = SpeakerManagerConfig.default
        #expect(config.speakerThreshold == 0.65)
        #expect(config.embeddingThreshold == 0.45)
        #expect(config.minSpeechDurationSeconds == 1.0)
        #expect(config.minEmbeddingUpdateDurationSeconds == 2.0)
        #expect(config.embeddingUpdateAlpha == 0.9)
        #expect(config.rawEmbeddingHistoryLimit == 50)
        #expect(config.embeddingDimension == 256)
    }

    @Test func knownSpeakerRecordsWithImpossibleFieldsAreRejected() throws {
        let manager = try makeManager()
        let start = ManualClock.start
        let records: [(Speaker, SpeakerManagerError.Code)] = [
            (Speaker(id: "", currentEmbedding: basis(0), createdAt: start), .invalidSpeakerID),
            (Speaker(id: "a", currentEmbedding: basis(0), createdAt: start, segmentCount: -1), .invalidSpeakerRecord),
            (Speaker(id: "a", currentEmbedding: basis(0), createdAt: start, segmentCount: 1, confidenceSum: 2), .invalidSpeakerRecord),
            (Speaker(id: "a", currentEmbedding: basis(0), durationSeconds: .nan, createdAt: start), .invalidDuration),
            (Speaker(
                id: "a", currentEmbedding: basis(0), createdAt: start,
                rawEmbeddings: [try RawEmbedding(segmentId: SegmentID(1), embedding: [1, 0], timestamp: start)]),
             .dimensionMismatch),
        ]
        for (record, expected) in records {
            #expect(code { try manager.initializeKnownSpeakers([record]) } == expected)
            #expect(code { try manager.upsertSpeaker(record) } == expected)
        }
        #expect(manager.speakerCount == 0)
    }
}
