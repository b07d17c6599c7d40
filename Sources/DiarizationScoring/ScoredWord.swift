/// A word with the speaker it is attributed to, on either side of a WDER comparison.
public struct ScoredWord: Sendable, Hashable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    /// nil: the word carries no speaker (a hypothesis word the system left unlabelled, or a reference
    /// word outside every reference turn).
    public var speaker: String?
    /// In the reference: the word's midpoint lies inside turns of two or more speakers.
    public var isOverlapped: Bool

    public init(text: String, startSeconds: Double, endSeconds: Double, speaker: String?, isOverlapped: Bool = false) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.speaker = speaker
        self.isOverlapped = isOverlapped
    }
}
