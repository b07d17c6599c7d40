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
    /// Reads `{"words":[{"text","start","end","confidence"?}]}` (extra fields such as a true "speaker" are
    /// ignored). Every error names the file and what is wrong with it; an empty list is not an error
    /// (the caller decides whether it is worth a warning).
    public static func readWords(path: String) throws -> [DeviceWord] {
        let what = "words file \(path)"
        let list = try readList(path: path, what: what, key: "words", shape: #"{"words": [{"text", "start", "end", "confidence"?}]}"#)
        return try list.enumerated().map { index, item in
            guard let fields = item as? [String: Any] else { throw DeviceInputError("\(what): word \(index) is not an object") }
            guard let text = fields["text"] as? String else { throw DeviceInputError("\(what): word \(index) has no \"text\" string") }
            let start = try seconds(fields["start"], "start", of: "word \(index)", in: what)
            let end = try seconds(fields["end"], "end", of: "word \(index)", in: what)
            return DeviceWord(text: text, startSeconds: start, endSeconds: end, confidence: (fields["confidence"] as? NSNumber)?.doubleValue)
        }.sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
    }

    /// Reads device segments from `{"segments":[{"speaker","start","end"}]}`.
    public static func readSegments(path: String) throws -> [DeviceSegment] {
        let what = "segments file \(path)"
        let list = try readList(path: path, what: what, key: "segments", shape: #"{"segments": [{"speaker", "start", "end"}]}"#)
        return try list.enumerated().map { index, item in
            guard let fields = item as? [String: Any] else { throw DeviceInputError("\(what): segment \(index) is not an object") }
            guard let speaker = fields["speaker"].map({ "\($0)" }) else { throw DeviceInputError("\(what): segment \(index) has no \"speaker\"") }
            let start = try seconds(fields["start"], "start", of: "segment \(index)", in: what)
            let end = try seconds(fields["end"], "end", of: "segment \(index)", in: what)
            return DeviceSegment(speaker: speaker, startSeconds: start, endSeconds: end)
        }
    }

    /// The array under `key` of the JSON object in the file at `path`; a missing or unreadable file,
    /// text that is not JSON and JSON of another shape are each told as such, naming the file (`what`).
    static func readList(path: String, what: String, key: String, shape: String) throws -> [Any] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw DeviceInputError("\(what): no such file") }
        guard !isFolder.boolValue else { throw DeviceInputError("\(what): is a folder, not a file") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DeviceInputError("\(what): cannot be read (\(FileManager.default.isReadableFile(atPath: path) ? "\(error.localizedDescription)" : "permission denied"))")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            // Foundation's own words for where the text stops being JSON ("around line 3, column 7").
            let detail = data.isEmpty ? "the file is empty" : (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw DeviceInputError("\(what): not JSON\(detail.map { " (\($0))" } ?? ""); expected \(shape)")
        }
        guard let object = root as? [String: Any] else {
            throw DeviceInputError("\(what): expected \(shape), found \(kind(of: root))")
        }
        guard let value = object[key] else {
            let keys = object.keys.sorted().prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
            throw DeviceInputError("\(what): expected \(shape), found an object without \"\(key)\"\(keys.isEmpty ? "" : " (keys: \(keys))")")
        }
        guard let list = value as? [Any] else {
            throw DeviceInputError("\(what): \"\(key)\" must be an array, found \(kind(of: value)); expected \(shape)")
        }
        return list
    }

    /// A time in seconds: a finite number, not below zero.
    private static func seconds(_ value: Any?, _ field: String, of item: String, in what: String) throws -> Double {
        guard let number = value as? NSNumber else {
            throw DeviceInputError("\(what): \(item) has no \"\(field)\" number (seconds)\(value.map { ", found \(kind(of: $0))" } ?? "")")
        }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds >= 0 else { throw DeviceInputError("\(what): \(item) has \"\(field)\" \(seconds), not a time in seconds") }
        return seconds
    }

    private static func kind(of value: Any) -> String {
        switch value {
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is String: "a string"
        case is NSNull: "null"
        case is NSNumber: "a number"
        default: "\(type(of: value))"
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
