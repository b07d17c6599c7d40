import Foundation
import SpeakerManager
import Testing
import DeterministicRandom

@Suite struct AssignmentTests {
    @Test func firstLongEnoughSegmentCreatesSpeakerOne() throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        var factory = EmbeddingFactory(seed: 1)
        let embedding = factory.randomDirection()

        let speaker = try #require(try manager.assignSpeaker(embedding, speechDurationSeconds: 2.5, confidence: 0.8))
        #expect(speaker.id == "1")
        #expect(speaker.name == "Speaker 1")
        #expect(speaker.durationSeconds == 2.5)
        #expect(speaker.updateCount == 1)
        #expect(speaker.segmentCount == 1)
        #expect(speaker.createdAt == clock.now)
        #expect(speaker.updatedAt == clock.now)
        #expect(!speaker.isPermanent)
        #expect(maxAbsDifference(speaker.currentEmbedding, try unitFloat(embedding)) == 0)
        #expect(speaker.rawEmbeddings.map(\.segmentId) == [SegmentID(1)])
        #expect(speaker.rawEmbeddings[0].durationSeconds == 2.5)
        #expect(manager.speakerCount == 1)
    }

    @Test func newSpeakerNeedsAtLeastMinSpeechDuration() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 2)
        let embedding = factory.randomDirection()
        let minimum = SpeakerManagerConfig.default.minSpeechDurationSeconds

        let short = try manager.assign(embedding, speechDurationSeconds: minimum.nextDown)
        #expect(short == .rejected(reason: .tooShortForNewSpeaker(
            speechDurationSeconds: minimum.nextDown, minimumSeconds: minimum, nearest: nil)))
        #expect(try manager.assignSpeaker(embedding, speechDurationSeconds: 0.3) == nil)
        #expect(manager.speakerCount == 0)

        #expect(try manager.assign(embedding, speechDurationSeconds: minimum) == .created(id: "1", nearest: nil))
    }

    @Test func rejectionNamesTheNearestSpeakerBeyondTheThreshold() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 3)
        let first = factory.randomDirection()
        _ = try manager.assign(first, speechDurationSeconds: 3)
        let far = factory.direction(atDistance: 0.9, from: first)
        let distance = try managerDistance(first, far)

        let decision = try manager.assign(far, speechDurationSeconds: 0.5)
        #expect(decision == .rejected(reason: .tooShortForNewSpeaker(
            speechDurationSeconds: 0.5, minimumSeconds: 1, nearest: SpeakerMatch(id: "1", distance: distance))))
        #expect(decision.speakerId == nil)
        #expect(manager.speakerCount == 1)
    }

    @Test func distanceExactlyAtSpeakerThresholdAssigns() throws {
        var factory = EmbeddingFactory(seed: 4)
        let first = factory.randomDirection()
        let second = factory.direction(atDistance: 0.6, from: first)
        let distance = try managerDistance(first, second)

        let inclusive = try makeManager(SpeakerManagerConfig(speakerThreshold: distance, embeddingThreshold: 0))
        _ = try inclusive.assign(first, speechDurationSeconds: 3)
        #expect(try inclusive.assign(second, speechDurationSeconds: 3) == .assigned(id: "1", distance: distance, updated: false))

        let justBelow = try makeManager(SpeakerManagerConfig(speakerThreshold: distance.nextDown, embeddingThreshold: 0))
        _ = try justBelow.assign(first, speechDurationSeconds: 3)
        #expect(try justBelow.assign(second, speechDurationSeconds: 3) == .created(
            id: "2", nearest: SpeakerMatch(id: "1", distance: distance)))
    }

    @Test func defaultSpeakerThresholdSeparatesDistancesAroundPointSixFive() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 5)
        let first = factory.randomDirection()
        _ = try manager.assign(first, speechDurationSeconds: 3)
        #expect(try manager.assign(factory.direction(atDistance: 0.64, from: first), speechDurationSeconds: 3).speakerId == "1")
        #expect(try manager.assign(factory.direction(atDistance: 0.66, from: first), speechDurationSeconds: 3).speakerId == "2")
    }

    @Test func distanceExactlyAtEmbeddingThresholdUpdatesTheProfile() throws {
        var factory = EmbeddingFactory(seed: 6)
        let first = factory.randomDirection()
        let second = factory.direction(atDistance: 0.3, from: first)
        let distance = try managerDistance(first, second)

        let inclusive = try makeManager(SpeakerManagerConfig(embeddingThreshold: distance))
        _ = try inclusive.assign(first, speechDurationSeconds: 3)
        #expect(try inclusive.assign(second, speechDurationSeconds: 3) == .assigned(id: "1", distance: distance, updated: true))
        #expect(inclusive.getSpeaker(for: "1")?.rawEmbeddings.count == 2)

        let justBelow = try makeManager(SpeakerManagerConfig(embeddingThreshold: distance.nextDown))
        _ = try justBelow.assign(first, speechDurationSeconds: 3)
        let before = try #require(justBelow.getSpeaker(for: "1"))
        #expect(try justBelow.assign(second, speechDurationSeconds: 3) == .assigned(id: "1", distance: distance, updated: false))
        let after = try #require(justBelow.getSpeaker(for: "1"))
        #expect(after.currentEmbedding == before.currentEmbedding)
        #expect(after.rawEmbeddings == before.rawEmbeddings)
        #expect(after.updateCount == 1)
        #expect(after.durationSeconds == 6)
        #expect(after.segmentCount == 2)
    }

    @Test func profileUpdateNeedsAtLeastMinEmbeddingUpdateDuration() throws {
        let minimum = SpeakerManagerConfig.default.minEmbeddingUpdateDurationSeconds
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 7)
        let first = factory.randomDirection()
        _ = try manager.assign(first, speechDurationSeconds: 3)
        let close = factory.direction(atDistance: 0.1, from: first)

        let short = try manager.assign(close, speechDurationSeconds: minimum.nextDown)
        guard case .assigned("1", _, updated: false) = short else {
            Issue.record("expected an assignment without update, got \(short)")
            return
        }
        let exact = try manager.assign(close, speechDurationSeconds: minimum)
        guard case .assigned("1", _, updated: true) = exact else {
            Issue.record("expected an assignment with update, got \(exact)")
            return
        }
        let speaker = try #require(manager.getSpeaker(for: "1"))
        #expect(speaker.updateCount == 2)
        #expect(speaker.rawEmbeddings.count == 2)
        #expect(speaker.durationSeconds == 3 + minimum.nextDown + minimum)
    }

    @Test(arguments: [Float(0.9), 0.5, 0.0, 1.0])
    func profileUpdateIsTheNormalisedExponentialMovingAverage(alpha: Float) throws {
        let clock = ManualClock()
        let manager = try makeManager(SpeakerManagerConfig(embeddingUpdateAlpha: alpha), clock: clock)
        var factory = EmbeddingFactory(seed: 8)
        let first = factory.randomDirection()
        let second = factory.direction(atDistance: 0.2, from: first)
        _ = try manager.assign(first, speechDurationSeconds: 3)
        clock.advance(seconds: 5)
        _ = try manager.assign(second, speechDurationSeconds: 2.5)

        let profile = try unitFloat(first).map(Double.init)
        let segment = try unitFloat(second).map(Double.init)
        let mixed = zip(profile, segment).map { Double(alpha) * $0 + (1 - Double(alpha)) * $1 }
        let length = mixed.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let expected = mixed.map { Float($0 / length) }

        let speaker = try #require(manager.getSpeaker(for: "1"))
        #expect(maxAbsDifference(speaker.currentEmbedding, expected) <= 1e-6)
        #expect(abs(norm(speaker.currentEmbedding) - 1) <= 1e-6)
        #expect(speaker.updatedAt == clock.now)
        #expect(speaker.createdAt == ManualClock.start)
        #expect(speaker.rawEmbeddings.last?.timestamp == clock.now)
    }

    @Test func nearestSpeakerWins() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 9)
        let a = factory.randomDirection()
        let b = factory.randomDirection()
        _ = try manager.assign(a, speechDurationSeconds: 3)
        _ = try manager.assign(b, speechDurationSeconds: 3)
        let nearB = factory.direction(atDistance: 0.2, from: b)
        #expect(try manager.assign(nearB, speechDurationSeconds: 3).speakerId == "2")
    }

    @Test func equalDistancesGoToTheSmallerIdInNumericOrder() throws {
        let manager = try makeManager()
        try manager.upsertSpeaker(id: "10", currentEmbedding: basis(0), durationSeconds: 1)
        try manager.upsertSpeaker(id: "2", currentEmbedding: basis(1), durationSeconds: 1)
        var between = basis(0)
        between[1] = 1
        let decision = try manager.assign(between, speechDurationSeconds: 3)
        guard case .assigned(let id, let distance, _) = decision else {
            Issue.record("expected an assignment, got \(decision)")
            return
        }
        #expect(id == "2")
        #expect(distance == (try managerDistance(basis(0), between)))
    }

    @Test func perCallThresholdAndNameOverrideTheDefaults() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 10)
        let first = factory.randomDirection()
        _ = try manager.assign(first, speechDurationSeconds: 3)
        let near = factory.direction(atDistance: 0.1, from: first)
        let speaker = try #require(try manager.assignSpeaker(
            near, speechDurationSeconds: 3, speakerThreshold: 0.05, newName: "Guest"))
        #expect(speaker.id == "2")
        #expect(speaker.name == "Guest")
    }

    @Test func callerSegmentIdsAreRecordedAndAutomaticNumberingContinuesAboveThem() throws {
        let manager = try makeManager()
        var factory = EmbeddingFactory(seed: 11)
        let first = factory.randomDirection()
        _ = try manager.assign(first, speechDurationSeconds: 3, segmentId: SegmentID(41))
        _ = try manager.assign(factory.direction(atDistance: 0.1, from: first), speechDurationSeconds: 3)
        #expect(manager.getSpeaker(for: "1")?.rawEmbeddings.map(\.segmentId) == [SegmentID(41), SegmentID(42)])
    }

    @Test func sameInputsGiveTheSameSpeakers() throws {
        func run() throws -> SpeakerManagerSnapshot {
            let clock = ManualClock()
            let manager = try makeManager(clock: clock)
            var factory = EmbeddingFactory(seed: 12)
            let voices = (0..<4).map { _ in factory.randomDirection() }
            var generator = SeededRandom(seed: 99)
            for _ in 0..<200 {
                let voice = voices[Int.random(in: 0..<voices.count, using: &generator)]
                let segment = factory.direction(atDistance: Double.random(in: 0...0.5, using: &generator), from: voice)
                _ = try manager.assign(segment, speechDurationSeconds: Double.random(in: 0.5...4, using: &generator))
                clock.advance(seconds: 1)
            }
            return manager.snapshot()
        }
        let first = try run()
        #expect(first.speakers.count >= 4)
        #expect(try run() == first)
    }
}
