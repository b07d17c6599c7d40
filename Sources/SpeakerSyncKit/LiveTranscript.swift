import Foundation

/// A word as the server labelled it, read from a `transcript` message (the device's view of a `WireWord`).
public struct LabelledDeviceWord: Sendable, Equatable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var speaker: String?
    public var speakerConfidence: Double?
    public var isFinal: Bool
    public var stored: Bool
}

extension LabelledDeviceWord {
    init(_ wire: WireWord) {
        self.init(text: wire.text, startSeconds: wire.startSeconds, endSeconds: wire.endSeconds, speaker: wire.speaker,
                  speakerConfidence: wire.speakerConfidence, isFinal: wire.isFinal, stored: wire.isStored)
    }
}

/// An utterance as the server sent it: speaker label, display name, span, text and words.
public struct LiveUtterance: Sendable, Equatable {
    public var id: String
    public var speaker: String?
    public var name: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var text: String
    public var words: [LabelledDeviceWord]
}

extension LiveUtterance {
    /// The utterance as the device shows it: an unattributed one is named "Unknown".
    init(_ wire: WireUtterance) {
        self.init(
            id: wire.id, speaker: wire.speaker, name: wire.name ?? wire.speaker ?? "Unknown", startSeconds: wire.startSeconds,
            endSeconds: wire.endSeconds, text: wire.text, words: wire.words.map(LabelledDeviceWord.init))
    }
}

/// The device's view of its transcript: `transcript` updates applied in order (upserts by id,
/// removals by id), the way a phone keeps its on-screen transcript current.
public struct LiveTranscript: Sendable {
    public private(set) var utterancesByID: [String: LiveUtterance] = [:]
    public private(set) var lastRevision: Int = 0
    public private(set) var isFinal = false
    public private(set) var speakerNames: [String: String] = [:]

    public init() {}

    public var utterances: [LiveUtterance] {
        utterancesByID.values.sorted { ($0.startSeconds, $0.endSeconds, $0.id) < ($1.startSeconds, $1.endSeconds, $1.id) }
    }

    public var words: [LabelledDeviceWord] { utterances.flatMap(\.words) }

    /// Applies one server message (decoded with `ServerMessageDecoder`): a `transcript` or `speakers`
    /// changes the transcript, others do not. Returns the words the update carried.
    @discardableResult
    public mutating func apply(_ message: ServerMessage) -> [LabelledDeviceWord] {
        switch message {
        case .transcript(let update):
            return apply(update).flatMap(\.words)
        case .speakers(let speakers):
            for speaker in speakers { speakerNames[speaker.label] = speaker.name }
            return []
        default:
            return []
        }
    }

    /// Applies a `transcript` update; returns the utterances it upserted, converted once for whoever
    /// also passes them on (the session's event stream).
    mutating func apply(_ update: TranscriptUpdate) -> [LiveUtterance] {
        lastRevision = Int(update.revision)
        if update.isFinal { isFinal = true }
        for id in update.removed { utterancesByID[id] = nil }
        let upserted = update.upserted.map(LiveUtterance.init)
        for utterance in upserted { utterancesByID[utterance.id] = utterance }
        return upserted
    }

    /// `Speaker 1: Hello there`, one line per utterance.
    public var text: String {
        utterances.map { "\($0.name): \($0.text)" }.joined(separator: "\n")
    }

    /// The same JSON shape as `GET /v1/conversations/{id}/transcript?format=json`.
    public func jsonObject(conversationID: String) -> [String: Any] {
        [
            "conversation_id": conversationID,
            "utterances": utterances.map { utterance -> [String: Any] in
                [
                    "id": utterance.id, "speaker": utterance.speaker as Any? ?? NSNull(), "name": utterance.name,
                    "start": utterance.startSeconds, "end": utterance.endSeconds, "text": utterance.text,
                    "words": utterance.words.map { word -> [String: Any] in
                        ["text": word.text, "start": word.startSeconds, "end": word.endSeconds, "speaker": word.speaker as Any? ?? NSNull()]
                    },
                ]
            },
        ]
    }
}
