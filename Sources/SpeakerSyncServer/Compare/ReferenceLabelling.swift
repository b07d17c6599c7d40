import DiarizationScoring
import Foundation
import SpeakerSyncStore
import TranscriptMerge

/// Reference turns someone uploaded (an RTTM), stored as a labelling of the conversation's words so
/// every provider can be scored against it by time (DER) and by word. The words get their reference
/// speaker by the same merge that labels them live, so a word's reference speaker is decided the way
/// a provider's is.
enum ReferenceLabelling {
    /// Labellings uploaded as references are named `reference:<name>`.
    static func labellingName(_ name: String) -> String { "reference:\(name)" }

    /// 1–64 characters of `A-Z a-z 0-9 . _ -`.
    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
    }

    /// The reference's turns from RTTM text: its SPEAKER lines of one file (any file id, since people
    /// name files as they like; several file ids are refused as ambiguous).
    static func turns(rttm text: String) throws(APIError) -> [SpeakerSegment] {
        let files: [String: [SpeakerSegment]]
        do {
            files = try RTTM.parse(text)
        } catch {
            throw APIError(status: 400, code: "invalid_rttm", message: "the reference is not valid RTTM: \(error)")
        }
        guard files.count == 1, let turns = files.values.first, !turns.isEmpty else {
            throw APIError(status: 400, code: "invalid_rttm",
                           message: files.isEmpty ? "the reference has no SPEAKER lines" : "the reference has turns of \(files.count) files (\(files.keys.sorted().joined(separator: ", "))); send one")
        }
        return turns
    }

    /// The reference as a labelling of `words`.
    static func labelling(name: String, turns segments: [SpeakerSegment], words: [LabelledWord], merge: MergeConfig) -> LabellingRecord {
        var merger = TranscriptMerger.labelling(words, config: merge)
        let turns = segments.enumerated().map { index, segment in
            SpeakerTurn(id: "reference:\(index)", speaker: segment.speaker, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds)
        }
        _ = merger.upsertTurns(turns)
        let stats: [String: Any] = ["speakers": Set(segments.map(\.speaker)).count, "words": merger.words.count,
                                    "unlabelled_words": merger.unlabelledWordCount]
        let statsJSON = (try? JSONSerialization.data(withJSONObject: stats, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return merger.labellingRecord(name: labellingName(name), provider: "reference", source: .reference, isComplete: true,
                                      statsJSON: statsJSON)
    }
}
