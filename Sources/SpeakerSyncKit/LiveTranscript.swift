import Foundation

/// A word as the server labelled it, read from a `transcript` message.
public struct LabelledDeviceWord: Sendable, Equatable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    public var speaker: String?
    public var speakerConfidence: Double?
    public var isFinal: Bool
    public var stored: Bool
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

    /// Applies one server message (already parsed JSON). Returns the words the update carried.
    @discardableResult
    public mutating func apply(_ message: [String: Any]) -> [LabelledDeviceWord] {
        switch message["type"] as? String {
        case "transcript":
            return applyTranscript(message).flatMap(\.words)
        case "speakers":
            for item in message["speakers"] as? [[String: Any]] ?? [] {
                if let label = item["label"] as? String { speakerNames[label] = item["name"] as? String ?? label }
            }
            return []
        default:
            return []
        }
    }

    /// Applies a `transcript` message; returns the utterances it upserted, parsed once for whoever
    /// also passes them on (the session's event stream).
    mutating func applyTranscript(_ message: [String: Any]) -> [LiveUtterance] {
        lastRevision = (message["revision"] as? NSNumber)?.intValue ?? lastRevision
        if message["final"] as? Bool == true { isFinal = true }
        for id in message["removed"] as? [String] ?? [] { utterancesByID[id] = nil }
        let upserted = (message["upserted"] as? [[String: Any]] ?? []).compactMap(Self.utterance)
        for utterance in upserted { utterancesByID[utterance.id] = utterance }
        return upserted
    }

    static func utterance(_ item: [String: Any]) -> LiveUtterance? {
        guard let id = item["id"] as? String else { return nil }
        let words = (item["words"] as? [[String: Any]] ?? []).map { word in
            LabelledDeviceWord(
                text: word["text"] as? String ?? "",
                startSeconds: (word["start"] as? NSNumber)?.doubleValue ?? 0,
                endSeconds: (word["end"] as? NSNumber)?.doubleValue ?? 0,
                speaker: word["speaker"] as? String,
                speakerConfidence: (word["speaker_confidence"] as? NSNumber)?.doubleValue,
                isFinal: word["final"] as? Bool ?? false,
                stored: word["stored"] as? Bool ?? false
            )
        }
        let speaker = item["speaker"] as? String
        return LiveUtterance(
            id: id, speaker: speaker, name: item["name"] as? String ?? speaker ?? "Unknown",
            startSeconds: (item["start"] as? NSNumber)?.doubleValue ?? 0,
            endSeconds: (item["end"] as? NSNumber)?.doubleValue ?? 0,
            text: item["text"] as? String ?? "", words: words
        )
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
