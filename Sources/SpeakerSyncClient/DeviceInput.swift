import DiarizationScoring
import Foundation
import SpeakerSyncKit
import TranscriptMerge

/// A word as a device's speech recogniser reports it: the merge's own `Word` (text, start, end, confidence).
public typealias DeviceWord = Word

// A speaker turn a device computed itself (provider `device`) is the protocol's `DeviceSegment`
// (SessionProtocol, re-exported by SpeakerSyncKit), the kit's `SpeakerSyncSegment`.

/// One ASR result as a device sends it in a `words` message. SpeechAnalyzer first reports a volatile
/// result for a stretch of audio and later a final one that replaces it under the same id.
public struct DeviceResult: Sendable, Equatable {
    public var resultID: String
    public var isFinal: Bool
    public var words: [DeviceWord]
    /// Audio time after which a device would have this result: its last word's end plus ASR delay.
    public var availableAtSeconds: Double
}

public struct DeviceInputError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum DeviceInput {
    /// Reads `{"words":[{"text","start","end","confidence"?}]}` (extra fields such as a true "speaker" are ignored).
    public static func readWords(path: String) throws -> [DeviceWord] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["words"] as? [[String: Any]] else {
            throw DeviceInputError("\(path): expected {\"words\": [{\"text\", \"start\", \"end\"}]}")
        }
        return try list.enumerated().map { index, item in
            guard let text = item["text"] as? String,
                  let start = (item["start"] as? NSNumber)?.doubleValue,
                  let end = (item["end"] as? NSNumber)?.doubleValue else {
                throw DeviceInputError("\(path): word \(index) needs text, start and end")
            }
            return DeviceWord(text: text, startSeconds: start, endSeconds: end, confidence: (item["confidence"] as? NSNumber)?.doubleValue)
        }.sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
    }

    /// Reads device segments from `{"segments":[{"speaker","start","end"}]}`.
    public static func readSegments(path: String) throws -> [DeviceSegment] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["segments"] as? [[String: Any]] else {
            throw DeviceInputError("\(path): expected {\"segments\": [{\"speaker\", \"start\", \"end\"}]}")
        }
        return try list.enumerated().map { index, item in
            guard let speaker = item["speaker"].map({ "\($0)" }),
                  let start = (item["start"] as? NSNumber)?.doubleValue,
                  let end = (item["end"] as? NSNumber)?.doubleValue else {
                throw DeviceInputError("\(path): segment \(index) needs speaker, start and end")
            }
            return DeviceSegment(speaker: speaker, startSeconds: start, endSeconds: end)
        }
    }

    /// Reads the SPEAKER lines of an RTTM file (optionally only those of one recording).
    public static func readRTTM(path: String, recording: String? = nil) throws -> [DeviceSegment] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let records: [(file: String, segment: SpeakerSegment)]
        do {
            records = try RTTM.records(text)
        } catch {
            throw DeviceInputError("\(path): \(error)")
        }
        return records.filter { recording == nil || $0.file == recording }
            .map { DeviceSegment(speaker: $0.segment.speaker, startSeconds: $0.segment.startSeconds, endSeconds: $0.segment.endSeconds) }
            .sorted { $0.startSeconds < $1.startSeconds }
    }

    /// Groups words into ASR results the way an on-device recogniser emits them: a result ends at a
    /// pause longer than `pauseSeconds` or after `maxWords`; each becomes available `delaySeconds`
    /// after its last word. With `volatile`, a result with two or more words is first sent without
    /// its last word (volatile) and then whole (final) under the same id.
    public static func results(
        from words: [DeviceWord], pauseSeconds: Double = 0.5, maxWords: Int = 8,
        delaySeconds: Double = 0.3, volatile: Bool = false
    ) -> [DeviceResult] {
        var groups: [[DeviceWord]] = []
        for word in words {
            if let last = groups.last?.last, word.startSeconds - last.endSeconds <= pauseSeconds, groups[groups.count - 1].count < maxWords {
                groups[groups.count - 1].append(word)
            } else {
                groups.append([word])
            }
        }
        var results: [DeviceResult] = []
        for group in groups {
            // Ids are unique on the conversation timeline (the first word's start in ms), so results
            // sent after a reconnect never replace results of the earlier connection.
            let id = "r\(Int((group[0].startSeconds * 1000).rounded()))"
            if volatile, group.count >= 2 {
                let partial = Array(group.dropLast())
                results.append(DeviceResult(resultID: id, isFinal: false, words: partial, availableAtSeconds: partial.last!.endSeconds + delaySeconds / 2))
            }
            results.append(DeviceResult(resultID: id, isFinal: true, words: group, availableAtSeconds: group.last!.endSeconds + delaySeconds))
        }
        return results.sorted { $0.availableAtSeconds < $1.availableAtSeconds }
    }
}
