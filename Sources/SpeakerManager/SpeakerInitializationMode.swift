/// How `initializeKnownSpeakers` treats a known speaker whose id is already in the database.
public enum SpeakerInitializationMode: String, Hashable, Sendable, Codable, CaseIterable {
    /// Clear the database first (keeping permanent speakers when `preserveIfPermanent`), then add.
    case reset
    /// Fold the known speaker into the existing one (`Speaker.mergeWith`, taking the known speaker's name).
    case merge
    /// Replace the existing speaker by the known one.
    case overwrite
    /// Keep the existing speaker and ignore the known one.
    case skip
}

/// What `initializeKnownSpeakers` did with each id, for logging and for tests.
public struct SpeakerInitializationSummary: Hashable, Sendable {
    /// Ids that were new and were added.
    public var inserted: [String] = []
    /// Ids whose existing speaker was replaced (`.overwrite`, `.reset`).
    public var overwritten: [String] = []
    /// Ids whose existing speaker absorbed the known one (`.merge`).
    public var merged: [String] = []
    /// Ids left as they were: `.skip`, or an existing permanent speaker protected by `preserveIfPermanent`.
    public var skipped: [String] = []
    /// Ids removed by `.reset` before adding.
    public var removedByReset: [String] = []

    public init() {}
}
