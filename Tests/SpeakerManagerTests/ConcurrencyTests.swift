import Foundation
import SpeakerManager
import Testing
import DeterministicRandom

/// Many tasks on one manager at once. Every call is atomic, so totals must balance exactly and every
/// speaker seen at any moment must be whole.
@Suite struct ConcurrencyTests {
    struct Accepted: Sendable {
        var created: [String] = []
        var segments = 0
        var durationSeconds = 0.0
        var confidenceSum = 0.0
    }

    static let durations: [Double] = [0.5, 1, 1.5, 2, 2.5, 3]
    static let confidences: [Float] = [0, 0.25, 0.5, 0.75, 1]

    /// Structural invariants of one speaker, whatever else is happening.
    static func checkWhole(_ speaker: Speaker) {
        #expect(speaker.currentEmbedding.count == dimension)
        #expect(abs(norm(speaker.currentEmbedding) - 1) < 1e-5)
        #expect(speaker.rawEmbeddings.count <= SpeakerManagerConfig.default.rawEmbeddingHistoryLimit)
        #expect(speaker.rawEmbeddings.map(\.timestamp) == speaker.rawEmbeddings.map(\.timestamp).sorted())
        #expect(speaker.durationSeconds >= 0)
        #expect(speaker.confidenceSum <= Double(speaker.segmentCount))
    }

    static func voices() -> [[Float]] {
        var factory = EmbeddingFactory(seed: 80)
        return (0..<6).map { _ in factory.randomDirection() }
    }

    @Test func concurrentAssignmentsBalanceExactly() async throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        let voices = Self.voices()
        let tasks = 8
        let segmentsPerTask = 300

        let results = try await withThrowingTaskGroup(of: Accepted.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var factory = EmbeddingFactory(seed: 1000 + UInt64(task))
                    var generator = SeededRandom(seed: UInt64(task))
                    var accepted = Accepted()
                    for _ in 0..<segmentsPerTask {
                        let voice = voices.randomElement(using: &generator)!
                        let seconds = Self.durations.randomElement(using: &generator)!
                        let confidence = Self.confidences.randomElement(using: &generator)!
                        let segment = factory.direction(atDistance: Double.random(in: 0...0.3, using: &generator), from: voice)
                        let decision = try manager.assign(segment, speechDurationSeconds: seconds, confidence: confidence)
                        switch decision {
                        case .created(let id, _): accepted.created.append(id)
                        case .assigned: break
                        case .rejected: continue
                        }
                        accepted.segments += 1
                        accepted.durationSeconds += seconds
                        accepted.confidenceSum += Double(confidence)
                        if Bool.random(using: &generator) { clock.advance(seconds: 0.25) }
                    }
                    return accepted
                }
            }
            // Readers alongside the writers: every speaker they see is whole.
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<100 {
                        manager.getSpeakerList().forEach(Self.checkWhole)
                        let statistics = manager.statistics
                        #expect(statistics.totalSpeakers >= statistics.speakersWithHistory)
                        _ = try manager.findMergeablePairs()
                    }
                    return Accepted()
                }
            }
            return try await group.reduce(into: [Accepted]()) { $0.append($1) }
        }

        let created = results.flatMap(\.created)
        let speakers = manager.getSpeakerList()
        speakers.forEach(Self.checkWhole)
        // Ids are issued once each, without gaps.
        #expect(created.sorted { Int($0)! < Int($1)! } == (1...created.count).map(String.init))
        #expect(manager.speakerIds == created.sorted { Int($0)! < Int($1)! })
        // Nothing is lost or counted twice (durations and confidences are exact binary fractions).
        #expect(speakers.reduce(0) { $0 + $1.segmentCount } == results.reduce(0) { $0 + $1.segments })
        #expect(speakers.reduce(0) { $0 + $1.durationSeconds } == results.reduce(0) { $0 + $1.durationSeconds })
        #expect(speakers.reduce(0) { $0 + $1.confidenceSum } == results.reduce(0) { $0 + $1.confidenceSum })
        // Every history entry has its own segment id.
        let segmentIds = speakers.flatMap { $0.rawEmbeddings.map(\.segmentId) }
        #expect(Set(segmentIds).count == segmentIds.count)
        #expect(results.reduce(0) { $0 + $1.segments } > tasks * segmentsPerTask / 2)
    }

    @Test func concurrentMixedOperationsKeepTheDatabaseConsistent() async throws {
        let clock = ManualClock()
        let manager = try makeManager(clock: clock)
        let voices = Self.voices()

        let succeeded = try await withThrowingTaskGroup(of: [String: Int].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var succeeded: [String: Int] = [:]
                    var factory = EmbeddingFactory(seed: 2000 + UInt64(task))
                    var generator = SeededRandom(seed: 500 + UInt64(task))
                    for step in 0..<250 {
                        let ids = manager.speakerIds
                        let someId = ids.randomElement(using: &generator) ?? "1"
                        let otherId = ids.randomElement(using: &generator) ?? "2"
                        switch Int.random(in: 0..<10, using: &generator) {
                        case 0...4:
                            let voice = voices.randomElement(using: &generator)!
                            _ = try manager.assign(
                                factory.direction(atDistance: Double.random(in: 0...0.5, using: &generator), from: voice),
                                speechDurationSeconds: Self.durations.randomElement(using: &generator)!)
                        case 5:
                            if manager.mergeSpeaker(someId, into: otherId, stopIfPermanent: Bool.random(using: &generator)) {
                                succeeded["merge", default: 0] += 1
                            }
                        case 6:
                            if let segment = manager.getSpeaker(for: someId)?.rawEmbeddings.randomElement(using: &generator) {
                                if manager.reassignSegment(segmentId: segment.segmentId, from: someId, to: otherId) {
                                    succeeded["reassign", default: 0] += 1
                                }
                            }
                        case 7:
                            if Bool.random(using: &generator) {
                                manager.makeSpeakerPermanent(someId)
                            } else {
                                manager.revokePermanence(from: someId)
                            }
                        case 8:
                            if step % 50 == 49 {
                                manager.removeSpeakersInactive(for: .seconds(5))
                            } else {
                                if manager.removeSpeaker(someId, keepIfPermanent: Bool.random(using: &generator)) {
                                    succeeded["remove", default: 0] += 1
                                }
                            }
                        default:
                            let known = "known-\(task)-\(step % 5)"
                            try manager.upsertSpeaker(
                                id: known, currentEmbedding: voices.randomElement(using: &generator)!, durationSeconds: 1)
                            let snapshot = manager.snapshot()
                            #expect(snapshot.speakers.map(\.id) == SpeakerIDs.sorted(snapshot.speakers.map(\.id)))
                        }
                        clock.advance(seconds: 0.01)
                    }
                    return succeeded
                }
            }
            return try await group.reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
        }
        // The mix really exercised the structural operations.
        #expect(succeeded["merge", default: 0] > 0)
        #expect(succeeded["reassign", default: 0] > 0)
        #expect(succeeded["remove", default: 0] > 0)

        let snapshot = manager.snapshot()
        snapshot.speakers.forEach(Self.checkWhole)
        #expect(Set(snapshot.speakers.map(\.id)).count == snapshot.speakers.count)
        let numericIds = snapshot.speakers.compactMap { Int($0.id) }
        #expect(numericIds.allSatisfy { $0 < snapshot.nextSpeakerNumber })
        let segmentIds = snapshot.speakers.flatMap { $0.rawEmbeddings.map(\.segmentId) }
        #expect(Set(segmentIds).count == segmentIds.count)
        #expect(segmentIds.allSatisfy { $0.rawValue < snapshot.nextSegmentNumber })
        #expect(manager.speakerCount == snapshot.speakers.count)
        #expect(manager.statistics.totalSpeakers == snapshot.speakers.count)
        // The state survives a round trip unchanged.
        let copy = try makeManager(clock: clock)
        try copy.restore(snapshot)
        #expect(copy.snapshot() == snapshot)
    }
}

/// The manager's id order, restated for the test: numeric ids by value, then the others as strings.
enum SpeakerIDs {
    static func sorted(_ ids: [String]) -> [String] {
        ids.sorted { a, b in
            switch (Int(a), Int(b)) {
            case let (x?, y?): x != y ? x < y : a < b
            case (_?, nil): true
            case (nil, _?): false
            case (nil, nil): a < b
            }
        }
    }
}
