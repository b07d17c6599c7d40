import Foundation
import TranscriptMerge

/// A conversation's labelled transcript as every output format sees it: utterances in time order plus
/// the names people gave the speakers. The live session, the HTTP route and the CLI all render this one
/// type, so the JSON a device gets at finalize, `GET …/transcript` and `speakersync stream --format json`
/// have the same shape.
public struct TranscriptDocument: Sendable {
    public var conversationID: String
    public var utterances: [Utterance]
    /// label → display name; labels without an entry show as themselves.
    public var names: [String: String]

    /// What a transcript shows for words no provider has labelled (yet).
    public static let unlabelledName = "Unknown"

    public init(conversationID: String, utterances: [Utterance], names: [String: String]) {
        self.conversationID = conversationID
        self.utterances = utterances
        self.names = names
    }

    public func name(of speaker: String?) -> String {
        guard let speaker else { return Self.unlabelledName }
        return names[speaker] ?? speaker
    }
}

/// The output formats of `GET /v1/conversations/{id}/transcript?format=` and the CLI's `--format`.
public enum TranscriptFormat: String, Sendable, CaseIterable {
    case json, text, srt, vtt, rttm

    public var contentType: String {
        switch self {
        case .json: "application/json"
        case .text: "text/plain; charset=utf-8"
        case .srt: "application/x-subrip; charset=utf-8"
        case .vtt: "text/vtt; charset=utf-8"
        case .rttm: "text/plain; charset=utf-8"
        }
    }
}

extension TranscriptDocument {
    public func rendered(as format: TranscriptFormat) -> String {
        switch format {
        case .json: jsonText()
        case .text: plainText()
        case .srt: subRip()
        case .vtt: webVTT()
        case .rttm: rttm()
        }
    }

    /// `{"conversation_id", "utterances":[{"id","speaker","name","start","end","text","words":[…]}]}`.
    public func jsonObject() -> [String: Any] {
        [
            "conversation_id": conversationID,
            "utterances": utterances.map { utterance -> [String: Any] in
                [
                    "id": "u\(utterance.id.rawValue)",
                    "speaker": utterance.speaker as Any? ?? NSNull(),
                    "name": name(of: utterance.speaker),
                    "start": Self.milliseconds(utterance.startSeconds),
                    "end": Self.milliseconds(utterance.endSeconds),
                    "text": utterance.text,
                    "words": utterance.words.map { word -> [String: Any] in
                        [
                            "text": word.text,
                            "start": Self.milliseconds(word.startSeconds),
                            "end": Self.milliseconds(word.endSeconds),
                            "speaker": word.speaker as Any? ?? NSNull(),
                            // How sure the merger is of the label: the console marks low ones.
                            "speaker_confidence": word.speakerConfidence.map(Self.milliseconds) as Any? ?? NSNull(),
                        ]
                    },
                ]
            },
        ]
    }

    public func jsonText() -> String {
        let data = (try? JSONSerialization.data(withJSONObject: jsonObject(), options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// One line per utterance: `Speaker 1: Hello there`.
    public func plainText() -> String {
        utterances.map { "\(name(of: $0.speaker)): \($0.text)" }.joined(separator: "\n") + (utterances.isEmpty ? "" : "\n")
    }

    public func subRip() -> String {
        utterances.enumerated().map { index, utterance in
            "\(index + 1)\n\(Self.clock(utterance.startSeconds, separator: ",")) --> \(Self.clock(utterance.endSeconds, separator: ","))\n\(name(of: utterance.speaker)): \(utterance.text)\n"
        }.joined(separator: "\n")
    }

    public func webVTT() -> String {
        "WEBVTT\n\n" + utterances.map { utterance in
            "u\(utterance.id.rawValue)\n\(Self.clock(utterance.startSeconds, separator: ".")) --> \(Self.clock(utterance.endSeconds, separator: "."))\n<v \(name(of: utterance.speaker))>\(utterance.text)\n"
        }.joined(separator: "\n")
    }

    /// NIST RTTM, one SPEAKER line per utterance of a labelled speaker (unlabelled speech is left out,
    /// as RTTM has no "unknown" speaker). Names with spaces are written with underscores.
    public func rttm() -> String {
        let file = conversationID.isEmpty ? "conversation" : conversationID
        return utterances.compactMap { utterance -> String? in
            guard let speaker = utterance.speaker else { return nil }
            let duration = max(0, utterance.endSeconds - utterance.startSeconds)
            let label = speaker.replacingOccurrences(of: " ", with: "_")
            return String(format: "SPEAKER %@ 1 %.3f %.3f <NA> <NA> %@ <NA> <NA>", file, utterance.startSeconds, duration, label)
        }.joined(separator: "\n") + "\n"
    }

    static func milliseconds(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }

    static func clock(_ seconds: Double, separator: String) -> String {
        let totalMilliseconds = Int((max(0, seconds) * 1000).rounded())
        let hours = totalMilliseconds / 3_600_000
        let minutes = totalMilliseconds / 60_000 % 60
        let secs = totalMilliseconds / 1000 % 60
        let millis = totalMilliseconds % 1000
        return String(format: "%02d:%02d:%02d%@%03d", hours, minutes, secs, separator, millis)
    }
}
