import DiarizationScoring
import Foundation
import SpeakerSyncAudio
import SpeakerSyncClient

/// A failure to assemble or run an evaluation; `code` is stable.
public struct EvalError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case invalidInput = "invalid_input"
        case missingReference = "missing_reference"
        case missingWords = "missing_words"
        case streamFailed = "stream_failed"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Where an evaluation's inputs are: audio files or folders of them, reference RTTM files, optional
/// UEM files, an optional folder of words files (`<id>.json`, the `speakersync words` output or a
/// synthetic set's truth words) and optional device diarization (`<id>.rttm`).
public struct EvalCorpusSpec: Sendable {
    public var audioPaths: [String]
    public var rttmPaths: [String]
    public var uemPaths: [String]
    public var wordsDirectory: String?
    public var deviceSegmentsDirectory: String?

    public init(audioPaths: [String], rttmPaths: [String], uemPaths: [String] = [],
                wordsDirectory: String? = nil, deviceSegmentsDirectory: String? = nil) {
        self.audioPaths = audioPaths
        self.rttmPaths = rttmPaths
        self.uemPaths = uemPaths
        self.wordsDirectory = wordsDirectory
        self.deviceSegmentsDirectory = deviceSegmentsDirectory
    }
}

public enum EvalCorpus {
    /// Loads every recording named by `spec`, in file-name order.
    public static func load(_ spec: EvalCorpusSpec) throws -> [EvalRecording] {
        let audioFiles = try expandAudioPaths(spec.audioPaths)
        guard !audioFiles.isEmpty else { throw EvalError(.invalidInput, "no .wav files in \(spec.audioPaths.joined(separator: ", "))") }
        var references: [String: [SpeakerSegment]] = [:]
        for path in spec.rttmPaths {
            for (id, segments) in try RTTM.parse(read(path)) { references[id, default: []] += segments }
        }
        var uems: [String: [TimeSpan]] = [:]
        for path in spec.uemPaths {
            for (id, spans) in try UEM.parse(read(path)) { uems[id, default: []] += spans }
        }
        return try audioFiles.map { url in
            let id = url.deletingPathExtension().lastPathComponent
            guard let reference = references[id] else {
                throw EvalError(.missingReference, "no reference turns for '\(id)' in \(spec.rttmPaths.joined(separator: ", "))")
            }
            let audio: AudioBuffer
            do {
                audio = try WAVFile.read(contentsOf: url)
            } catch {
                throw EvalError(.invalidInput, "\(url.path): \(error)")
            }
            let (words, trueSpeakers) = try loadWords(id: id, directory: spec.wordsDirectory)
            let spans = words.map { (text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            let referenceWords = trueSpeakers.map { ReferenceWordLabels.label(spans, reference: reference, trueSpeakers: $0) }
                ?? ReferenceWordLabels.label(spans, reference: reference)
            var deviceSegments = reference.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            if let directory = spec.deviceSegmentsDirectory {
                let path = URL(fileURLWithPath: directory).appendingPathComponent("\(id).rttm").path
                deviceSegments = try (RTTM.parse(read(path))[id] ?? []).map {
                    DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds)
                }
            }
            return EvalRecording(id: id, audio: audio, words: words, reference: reference, uem: uems[id],
                                 referenceWords: referenceWords, deviceSegments: deviceSegments)
        }
    }

    /// WAV files named by `paths`: files as given, folders as their `.wav` files in name order.
    public static func expandAudioPaths(_ paths: [String]) throws -> [URL] {
        var files: [URL] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw EvalError(.invalidInput, "\(path) does not exist")
            }
            if isDirectory.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".wav") }.sorted()
                files += names.map { URL(fileURLWithPath: path).appendingPathComponent($0) }
            } else {
                files.append(URL(fileURLWithPath: path))
            }
        }
        return files
    }

    /// The words for `id` and, when the file has them, their true speakers (synthetic meetings).
    /// Without a words folder the evaluation scores turns only (DER, JER, speakers, speed).
    static func loadWords(id: String, directory: String?) throws -> ([DeviceWord], [String]?) {
        guard let directory else { return ([], nil) }
        let folder = URL(fileURLWithPath: directory)
        // `<id>.json` (synthetic sets) or `<id>.words.json` (what `speakersync words --output-dir` writes).
        guard let path = ["\(id).json", "\(id).words.json"].map({ folder.appendingPathComponent($0).path })
            .first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw EvalError(.missingWords, "no words file \(id).json or \(id).words.json in \(directory) (make it with `speakersync words`)")
        }
        guard let root = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any],
              let list = root["words"] as? [[String: Any]] else {
            throw EvalError(.invalidInput, "\(path): expected {\"words\": [...]}")
        }
        var entries: [(word: DeviceWord, speaker: String?)] = []
        for (index, item) in list.enumerated() {
            guard let text = item["text"] as? String, let start = (item["start"] as? NSNumber)?.doubleValue,
                  let end = (item["end"] as? NSNumber)?.doubleValue, start.isFinite, end >= start else {
                throw EvalError(.invalidInput, "\(path): word \(index) needs text, start and end (end ≥ start)")
            }
            entries.append((DeviceWord(text: text, startSeconds: start, endSeconds: end, confidence: (item["confidence"] as? NSNumber)?.doubleValue),
                            item["speaker"] as? String))
        }
        entries.sort { ($0.word.startSeconds, $0.word.endSeconds) < ($1.word.startSeconds, $1.word.endSeconds) }
        let speakers = entries.map(\.speaker)
        let known = speakers.compactMap { $0 }
        return (entries.map(\.word), known.count == speakers.count && !known.isEmpty ? known : nil)
    }

    static func read(_ path: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw EvalError(.invalidInput, "cannot read \(path): \(error.localizedDescription)")
        }
    }
}
