import Foundation
import TranscriptMerge

/// Who produced a labelling.
public enum LabellingSource: String, Sendable, CaseIterable {
    /// The session's own provider: the labels the device was sent.
    case live
    /// A provider run beside the session's on the same audio (`shadow_providers`); never sent.
    case shadow
    /// A provider run later over the conversation's stored audio.
    case rediarized
    /// Reference turns uploaded to score the others against (an RTTM someone annotated).
    case reference
}

/// One provider's labelling of a conversation's words, written whole (replacing the earlier one of
/// the same name) when its session or job ends.
public struct LabellingRecord: Sendable, Equatable {
    /// The provider id, "<provider>:rediarized", or "reference:<name>".
    public var name: String
    public var provider: String
    public var source: LabellingSource
    /// False when it does not cover the whole conversation: interrupted, or its provider failed or
    /// fell behind (`statusReason` says which).
    public var isComplete: Bool
    public var statusReason: String?
    /// The labelling's figures as a JSON object (audio seconds, speakers, real-time factor, label
    /// latency, chunk time); the store keeps it as given.
    public var statsJSON: String
    public var turns: [SpeakerTurn]
    public var words: [WordLabel]
    /// When it was written (nil before it was).
    public var updatedAt: Date?

    public init(name: String, provider: String, source: LabellingSource, isComplete: Bool, statusReason: String? = nil,
                statsJSON: String = "{}", turns: [SpeakerTurn], words: [WordLabel], updatedAt: Date? = nil) {
        self.name = name
        self.provider = provider
        self.source = source
        self.isComplete = isComplete
        self.statusReason = statusReason
        self.statsJSON = statsJSON
        self.turns = turns
        self.words = words
        self.updatedAt = updatedAt
    }
}

/// The speaker one labelling gave one word.
public struct WordLabel: Sendable, Hashable {
    public var id: WordID
    public var speaker: String?
    public var speakerConfidence: Double?

    public init(id: WordID, speaker: String?, speakerConfidence: Double? = nil) {
        self.id = id
        self.speaker = speaker
        self.speakerConfidence = speakerConfidence
    }
}

/// A stored labelling without its turns and words: what a list of them shows.
public struct LabellingSummary: Sendable, Equatable {
    public var name: String
    public var provider: String
    public var source: LabellingSource
    public var isComplete: Bool
    public var statusReason: String?
    public var statsJSON: String
    public var turnCount: Int
    public var wordCount: Int
    public var labelledWordCount: Int
    public var speakerCount: Int
    public var updatedAt: Date
}
