/// A text message from the device, decoded and validated.
public enum ClientMessage: Hashable, Sendable {
    case start(StartRequest)
    case words(WordsMessage)
    case segments([DeviceSegment])
    case renameSpeaker(speaker: String, name: String)
    case mergeSpeakers(from: String, into: String)
    case finalize
    case keepalive

    public var type: ClientMessageType {
        switch self {
        case .start: .start
        case .words: .words
        case .segments: .segments
        case .renameSpeaker: .renameSpeaker
        case .mergeSpeakers: .mergeSpeakers
        case .finalize: .finalize
        case .keepalive: .keepalive
        }
    }
}

/// The `type` field of a client message.
public enum ClientMessageType: String, CaseIterable, Hashable, Sendable {
    case start
    case words
    case segments
    case renameSpeaker = "rename_speaker"
    case mergeSpeakers = "merge_speakers"
    case finalize
    case keepalive
}

/// One ASR result: its words replace every word the conversation holds under the same `resultID`.
public struct WordsMessage: Hashable, Sendable {
    /// The device's id for this result; stable while the result is revised (volatile → final).
    public var resultID: String
    /// False for a volatile result that will be revised, true once the ASR committed it.
    public var isFinal: Bool
    /// May be empty: the result then has no words any more (its earlier words are removed).
    public var words: [WireInputWord]

    public init(resultID: String, isFinal: Bool, words: [WireInputWord]) {
        self.resultID = resultID
        self.isFinal = isFinal
        self.words = words
    }
}

/// A word as the device's ASR gives it (times in seconds on the conversation's audio timeline): the
/// merge's own `Word`, so a decoded message goes to the merger unchanged.
public typealias WireInputWord = Word

/// A speaker turn computed on the device (provider `device`); times on the audio timeline.
public struct DeviceSegment: Hashable, Sendable {
    /// The device's own key for the speaker; the server maps it to a stable session label.
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var confidence: Double?

    public init(speaker: String, startSeconds: Double, endSeconds: Double, confidence: Double? = nil) {
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
    }
}
