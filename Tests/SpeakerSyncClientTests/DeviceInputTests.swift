import Foundation
import Testing
@testable import SpeakerSyncClient

/// Words and segments files: read when right, and when wrong an error that names the file and what
/// is wrong with it (not Foundation's NSCocoaErrorDomain codes).
struct DeviceInputTests {
    /// Writes `contents` to a fresh file; returns its path.
    static func file(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("device-input-\(UUID().uuidString.prefix(8)).json")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func failure(_ read: () throws -> Any) -> String {
        do {
            _ = try read()
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func wordsAreReadInTimeOrder() throws {
        let path = try Self.file(#"{"words":[{"text":"b","start":1,"end":1.5},{"text":"a","start":0.2,"end":0.5,"confidence":0.9,"speaker":"x"}]}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let words = try DeviceInput.readWords(path: path)
        #expect(words.map(\.text) == ["a", "b"])
        #expect(words[0].confidence == 0.9)
        #expect(try DeviceInput.readWords(path: try Self.file(#"{"words":[]}"#)).isEmpty)
    }

    @Test(arguments: [
        ("not json {", "not JSON ("), ("", "not JSON (the file is empty)"),
        ("[1, 2]", #"expected {"words": [{"text", "start", "end", "confidence"?}]}, found an array"#),
        (#"{"word": []}"#, #"found an object without "words" (keys: "word")"#),
        (#"{"words": {"text": "a"}}"#, #""words" must be an array, found an object"#),
        (#"{"words": ["a"]}"#, "word 0 is not an object"),
        (#"{"words": [{"start": 0, "end": 1}]}"#, #"word 0 has no "text" string"#),
        (#"{"words": [{"text": "a", "start": "0.1", "end": 1}]}"#, #"word 0 has no "start" number (seconds), found a string"#),
        (#"{"words": [{"text": "a", "start": 0.1}]}"#, #"word 0 has no "end" number (seconds)"#),
        (#"{"words": [{"text": "a", "start": -1, "end": 1}]}"#, #"word 0 has "start" -1.0, not a time in seconds"#),
    ])
    func aWrongWordsFileIsNamedWithWhatIsWrong(_ contents: String, _ problem: String) throws {
        let path = try Self.file(contents)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let message = Self.failure { try DeviceInput.readWords(path: path) }
        #expect(message.hasPrefix("words file \(path): "), "\(message)")
        #expect(message.contains(problem), "\(message)")
    }

    @Test func aMissingFileOrAFolderIsSaidSo() throws {
        #expect(Self.failure { try DeviceInput.readWords(path: "/nonexistent/words.json") } == "words file /nonexistent/words.json: no such file")
        let folder = FileManager.default.temporaryDirectory.path
        #expect(Self.failure { try DeviceInput.readWords(path: folder) } == "words file \(folder): is a folder, not a file")
        #expect(Self.failure { try DeviceInput.readSegments(path: "/nonexistent/s.json") } == "segments file /nonexistent/s.json: no such file")
    }

    @Test func segmentsFilesAreCheckedTheSameWay() throws {
        let good = try Self.file(#"{"segments":[{"speaker":"A","start":0,"end":1},{"speaker":2,"start":1,"end":2}]}"#)
        let bad = try Self.file(#"{"segments":[{"start":0,"end":1}]}"#)
        defer { [good, bad].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        #expect(try DeviceInput.readSegments(path: good).map(\.speaker) == ["A", "2"])
        #expect(Self.failure { try DeviceInput.readSegments(path: bad) } == "segments file \(bad): segment 0 has no \"speaker\"")
    }
}
