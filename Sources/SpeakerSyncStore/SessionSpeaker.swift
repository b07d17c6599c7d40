/// One speaker of a conversation as the people reading the transcript see it.
public struct SessionSpeaker: Sendable, Hashable {
    /// Stable label, "Speaker 1", "Speaker 2", … in order of first appearance.
    public var label: String
    /// A name a person gave this speaker (rename_speaker), if any.
    public var displayName: String?
    /// When merged into another speaker (merge_speakers), the label it now belongs to.
    public var mergedInto: String?
    /// Audio time at which the speaker was first heard.
    public var firstSeenSeconds: Double?

    public init(label: String, displayName: String? = nil, mergedInto: String? = nil, firstSeenSeconds: Double? = nil) {
        self.label = label
        self.displayName = displayName
        self.mergedInto = mergedInto
        self.firstSeenSeconds = firstSeenSeconds
    }

    /// What a transcript line shows: the given name, else the label.
    public var name: String { displayName ?? label }
}

