import DiarizationScoring
import Foundation
import SpeakerSyncAudio

/// The words JSON shape shared with `speakersync stream --words`: `{"words":[{"text","start","end",...}]}`.
/// `speaker` is present in truth files and absent in what a device would send.
public struct WordsFile: Sendable, Hashable, Codable {
    public struct Entry: Sendable, Hashable, Codable {
        public var text: String
        public var start: Double
        public var end: Double
        public var speaker: String?
        public var confidence: Double?

        public init(text: String, start: Double, end: Double, speaker: String? = nil, confidence: Double? = nil) {
            self.text = text
            self.start = start
            self.end = end
            self.speaker = speaker
            self.confidence = confidence
        }
    }

    public var words: [Entry]

    public init(words: [Entry]) { self.words = words }

    public static func decode(_ data: Data) throws -> WordsFile {
        do {
            return try JSONDecoder().decode(WordsFile.self, from: data)
        } catch {
            throw SynthError(.invalidFile, "words JSON: \(error)")
        }
    }
}

/// RTTM speaker-turn files (NIST): `SPEAKER <file> 1 <start> <dur> <NA> <NA> <speaker> <NA> <NA>`.
public enum RTTMFile {
    public static func encode(_ turns: [SynthTurn], fileID: String) -> String {
        turns.map { turn in
            String(format: "SPEAKER %@ 1 %.3f %.3f <NA> <NA> %@ <NA> <NA>\n", fileID, turn.startSeconds,
                   turn.endSeconds - turn.startSeconds, turn.speaker)
        }.joined()
    }

    /// Parses SPEAKER lines in file order, with DiarizationScoring's RTTM rules (other record types,
    /// blank lines and comments are skipped).
    public static func decode(_ text: String) throws -> [SynthTurn] {
        do {
            return try RTTM.records(text).map {
                SynthTurn(speaker: $0.segment.speaker, startSeconds: $0.segment.startSeconds, endSeconds: $0.segment.endSeconds)
            }
        } catch {
            throw SynthError(.invalidFile, "RTTM: \(error)")
        }
    }
}

extension SynthesizedMeeting {
    /// 16-bit PCM mono WAV.
    public func wavData() -> Data {
        WAVWriter.encode(AudioBuffer(samples: audio, sampleRate: sampleRate), format: .pcm16)
    }

    public func rttm(fileID: String) -> String { RTTMFile.encode(turns, fileID: fileID) }

    /// Words JSON ordered by start time; with `includeSpeaker` false it is what a device would send.
    public func wordsFile(includeSpeaker: Bool = true) -> WordsFile {
        WordsFile(words: wordsByStart.map {
            WordsFile.Entry(text: $0.text, start: $0.startSeconds, end: $0.endSeconds,
                            speaker: includeSpeaker ? $0.speaker : nil)
        })
    }

    public func wordsJSON(includeSpeaker: Bool = true) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(wordsFile(includeSpeaker: includeSpeaker))) ?? Data()
    }

    /// Words in time order (stable for equal starts), the order a device would report them.
    public var wordsByStart: [SynthWord] {
        words.enumerated().sorted { ($0.element.startSeconds, $0.offset) < ($1.element.startSeconds, $1.offset) }
            .map(\.element)
    }

    /// Writes `<base>.wav`, `<base>.rttm`, `<base>.words.json` (with speakers) and `<base>.device.json`
    /// (the device ASR replay) into `directory`; returns the URLs in that order.
    @discardableResult
    public func write(to directory: URL, baseName: String,
                      device: DeviceASRConfig = .default) throws -> [URL] {
        let wav = directory.appendingPathComponent("\(baseName).wav")
        let rttm = directory.appendingPathComponent("\(baseName).rttm")
        let words = directory.appendingPathComponent("\(baseName).words.json")
        let replay = directory.appendingPathComponent("\(baseName).device.json")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try wavData().write(to: wav, options: .atomic)
            try Data(self.rttm(fileID: baseName).utf8).write(to: rttm, options: .atomic)
            try wordsJSON(includeSpeaker: true).write(to: words, options: .atomic)
            try DeviceASRResult.encodeReplay(deviceResults(config: device)).write(to: replay, options: .atomic)
        } catch let error as SynthError {
            throw error
        } catch {
            throw SynthError(.io, "cannot write meeting files to \(directory.path): \(error.localizedDescription)")
        }
        return [wav, rttm, words, replay]
    }
}
