#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

/// Tracks speaker identities across the chunks of one audio stream (FluidAudio's `SpeakerManager`): each
/// segment embedding is assigned to the nearest known speaker or starts a new one, profiles are refined by
/// confident segments, and known speakers can be pre-loaded, merged, removed and protected as permanent.
///
/// Safe to call from any thread: the database sits behind one `Mutex`, and every public call is a single
/// critical section, so each call is atomic (a concurrent caller never sees half an assignment or merge).
/// Keep one manager per stream. Closures passed in (predicates, the clock) run inside the critical section
/// and must not call back into the manager.
public final class SpeakerManager: Sendable {
    public let config: SpeakerManagerConfig
    let logger: Logger
    /// The only source of time: `createdAt`, `updatedAt`, history timestamps and inactivity cut-offs.
    let clock: @Sendable () -> Date
    let database: Mutex<SpeakerDatabase>

    /// - Parameters:
    ///   - clock: injected so tests (and a caller replaying a recording) control every timestamp.
    public init(
        config: SpeakerManagerConfig = .default,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(SpeakerManagerError) {
        try config.validate()
        self.config = config
        self.logger = logger
        self.clock = clock
        self.database = Mutex(SpeakerDatabase(config: config))
    }

    /// Runs `body` as one critical section, with the time read inside it so timestamps follow lock order.
    func withDatabase<Result: Sendable, E: Error>(
        _ body: (inout SpeakerDatabase, Date) throws(E) -> Result
    ) throws(E) -> Result {
        try database.withLock { (database) throws(E) -> Result in try body(&database, clock()) }
    }

    /// Cosine distance (0 same direction … 2 opposite), as every threshold here measures it.
    public static func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        SpeakerUtilities.cosineDistance(a, b)
    }

    // MARK: - Reading

    public func getSpeaker(for id: String) -> Speaker? {
        database.withLock { $0.speakers[id] }
    }

    public func hasSpeaker(_ id: String) -> Bool {
        database.withLock { $0.speakers[id] != nil }
    }

    /// Every speaker by id (FluidAudio: "for testing/debugging").
    public func getAllSpeakers() -> [String: Speaker] {
        database.withLock { $0.speakers }
    }

    /// Every speaker, sorted by id (numeric ids by value).
    public func getSpeakerList() -> [Speaker] {
        database.withLock { $0.sortedSpeakers }
    }

    public var speakerCount: Int {
        database.withLock { $0.speakers.count }
    }

    /// Sorted: numeric ids by value ("2" before "10"), then the others as strings.
    public var speakerIds: [String] {
        database.withLock { $0.sortedIds }
    }

    public var permanentSpeakerIds: [String] {
        database.withLock { SpeakerIDOrder.sorted($0.speakers.values.filter(\.isPermanent).map(\.id)) }
    }

    /// The sorted speaker ids (FluidAudio's name for `speakerIds`).
    public func getCurrentSpeakerNames() -> [String] {
        speakerIds
    }

    /// Ids of the speakers `predicate` accepts, sorted.
    public func findSpeakers(where predicate: (Speaker) -> Bool) -> [String] {
        database.withLock { database in database.sortedSpeakers.filter(predicate).map(\.id) }
    }

    public var statistics: SpeakerStatistics {
        database.withLock { SpeakerStatistics($0.speakers.values) }
    }

    /// FluidAudio's name for `statistics`.
    public func getGlobalSpeakerStats() -> SpeakerStatistics {
        statistics
    }

    // MARK: - Matching

    /// The nearest speaker if it is within the threshold (inclusive), else nil.
    /// - Parameter speakerThreshold: overrides `config.speakerThreshold` for this query.
    public func findSpeaker(with embedding: [Float], speakerThreshold: Float? = nil) throws(SpeakerManagerError)
        -> SpeakerMatch?
    {
        let unit = try config.unitEmbedding(embedding)
        let threshold = try config.threshold(speakerThreshold, default: config.speakerThreshold)
        return database.withLock { database in
            database.nearest(to: unit).flatMap { $0.distance <= threshold ? $0 : nil }
        }
    }

    /// Every speaker within the threshold (inclusive), nearest first; equal distances in id order.
    public func findMatchingSpeakers(with embedding: [Float], speakerThreshold: Float? = nil)
        throws(SpeakerManagerError) -> [SpeakerMatch]
    {
        let unit = try config.unitEmbedding(embedding)
        let threshold = try config.threshold(speakerThreshold, default: config.speakerThreshold)
        return database.withLock { $0.matches(for: unit, within: threshold) }
    }

    /// Pairs of speakers whose profiles are within the threshold (inclusive) of each other, i.e. probably
    /// the same person. A permanent speaker is always the destination when one of the two is.
    /// - Parameter excludeIfBothPermanent: two permanent speakers are distinct people by decision, not by voice.
    public func findMergeablePairs(speakerThreshold: Float? = nil, excludeIfBothPermanent: Bool = true)
        throws(SpeakerManagerError) -> [MergeablePair]
    {
        let threshold = try config.threshold(speakerThreshold, default: config.speakerThreshold)
        return database.withLock {
            $0.mergeablePairs(within: threshold, excludeIfBothPermanent: excludeIfBothPermanent)
        }
    }
}
