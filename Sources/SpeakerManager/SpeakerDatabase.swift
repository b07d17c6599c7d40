#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The manager's state and every operation on it, as a plain value: `SpeakerManager` holds one behind a
/// mutex and runs each public call as one closure over it, which is what makes every call atomic.
/// Inputs reaching these methods are already validated and normalised.
struct SpeakerDatabase: Sendable {
    let config: SpeakerManagerConfig
    var speakers: [String: Speaker] = [:]
    /// The next "N" for a created speaker; kept above every numeric id in use.
    var nextSpeakerNumber = 1
    /// The next number for a segment the caller did not label; kept above every segment id seen.
    var nextSegmentNumber: UInt64 = 1

    init(config: SpeakerManagerConfig) {
        self.config = config
    }

    var sortedIds: [String] { SpeakerIDOrder.sorted(speakers.keys) }

    var sortedSpeakers: [Speaker] { sortedIds.compactMap { speakers[$0] } }

    func nearest(to unitEmbedding: [Float]) -> SpeakerMatch? {
        SpeakerUtilities.findClosestSpeaker(embedding: unitEmbedding, candidates: speakers.values)
    }

    func matches(for unitEmbedding: [Float], within threshold: Float) -> [SpeakerMatch] {
        speakers.values
            .map { SpeakerMatch(id: $0.id, distance: SpeakerUtilities.cosineDistance(unitEmbedding, $0.currentEmbedding)) }
            .filter { $0.distance <= threshold }
            .sorted {
                $0.distance != $1.distance
                    ? $0.distance < $1.distance : SpeakerIDOrder.areInIncreasingOrder($0.id, $1.id)
            }
    }

    // MARK: - Identifiers

    mutating func issueSpeakerID() -> String {
        while speakers[String(nextSpeakerNumber)] != nil { nextSpeakerNumber += 1 }
        defer { nextSpeakerNumber += 1 }
        return String(nextSpeakerNumber)
    }

    /// Keeps created ids from colliding with a numeric id that arrived from outside (FluidAudio's
    /// "tracks numeric IDs for auto-increment").
    mutating func noteSpeakerID(_ id: String) {
        // Ids near Int.max are left to `issueSpeakerID`'s collision check rather than overflow the counter.
        if let number = Int(id), number >= nextSpeakerNumber, number < Int.max - 1 { nextSpeakerNumber = number + 1 }
    }

    mutating func issueSegmentID(_ given: SegmentID?) -> SegmentID {
        if let given {
            noteSegmentID(given)
            return given
        }
        defer { nextSegmentNumber += 1 }
        return SegmentID(nextSegmentNumber)
    }

    mutating func noteSegmentID(_ id: SegmentID) {
        if id.rawValue >= nextSegmentNumber { nextSegmentNumber = id.rawValue == .max ? .max : id.rawValue + 1 }
    }

    /// After a reset: the smallest number above every numeric id still present.
    mutating func recomputeNextSpeakerNumber() {
        nextSpeakerNumber = (speakers.keys.compactMap { Int($0) }.filter { $0 > 0 && $0 < Int.max - 1 }.max() ?? 0) + 1
    }
}
