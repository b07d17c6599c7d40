/// What `assign` did with a segment embedding, so the caller can log why.
public enum AssignmentDecision: Hashable, Sendable {
    /// The nearest speaker was within `speakerThreshold`. `updated` tells whether the segment also refined
    /// the profile (distance within `embeddingThreshold` and at least `minEmbeddingUpdateDurationSeconds`).
    case assigned(id: String, distance: Float, updated: Bool)
    /// Nobody was within `speakerThreshold` and the segment was long enough for a new speaker.
    /// `nearest` is the closest existing speaker, nil when there was none.
    case created(id: String, nearest: SpeakerMatch?)
    /// Nothing changed.
    case rejected(reason: RejectionReason)

    /// The speaker the segment now belongs to; nil when rejected.
    public var speakerId: String? {
        switch self {
        case .assigned(let id, _, _), .created(let id, _): id
        case .rejected: nil
        }
    }
}

/// Why a segment was attributed to nobody.
public enum RejectionReason: Hashable, Sendable {
    /// No speaker within the threshold, and the segment is shorter than `minSpeechDurationSeconds`, the
    /// minimum to create a speaker. `nearest` is the closest speaker (beyond the threshold), if any.
    case tooShortForNewSpeaker(speechDurationSeconds: Double, minimumSeconds: Double, nearest: SpeakerMatch?)
}
