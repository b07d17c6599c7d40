import SpeakerSyncStore
import TranscriptMerge

/// What applying a provider's turns changed in a `Labelling`: the merge's delta (the words and
/// utterances whose speaker changed) and what must be stored with it.
struct LabellingChange {
    var delta = TranscriptDelta()
    /// Speakers the turns created or named (an enrolled person).
    var speakers: [SessionSpeaker] = []
    /// Registry keys (`provider/instance:speaker`) bound by the turns, with their labels.
    var keyLabels: [String: String] = [:]
    /// The turns as merged: on the conversation timeline, under session labels, with stored ids.
    var upsertedTurns: [SpeakerTurn] = []
    /// Stored ids of turns the provider withdrew.
    var removedTurnIDs: [String] = []
}
