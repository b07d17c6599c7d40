import Foundation

/// Writes recognised words in the JSON shape `speakersync stream --words` reads
/// (`DeviceInput.readWords`) and MeetingSynth's `WordsFile` writes:
/// `{"words":[{"confidence","end","start","text"}]}`, keys sorted, times in seconds.
///
/// MeetingSynth is not a dependency of this module, so the shape is repeated here; the tests read
/// the output back with the client's own reader.
public enum RecognizedWordsFile {
    struct Entry: Codable {
        var text: String
        var start: Double
        var end: Double
        var confidence: Double
    }

    struct Root: Codable {
        var words: [Entry]
    }

    /// Times are rounded to milliseconds and confidences to three decimals: finer digits carry no
    /// information at a 10 ms frame step and only make the files harder to read and diff.
    public static func encode(_ words: [RecognizedWord]) throws -> Data {
        let root = Root(words: words.map {
            Entry(text: $0.text, start: rounded($0.startSeconds, 1000), end: rounded($0.endSeconds, 1000),
                  confidence: rounded($0.confidence, 1000))
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(root)
        } catch {
            throw RecognizerError(.io, "cannot encode words JSON: \(error)")
        }
    }

    /// Writes the file atomically, creating its folder.
    public static func write(_ words: [RecognizedWord], to url: URL) throws {
        let data = try encode(words)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url, options: .atomic)
        } catch {
            throw RecognizerError(.io, "cannot write \(url.path): \(error.localizedDescription)")
        }
    }

    static func rounded(_ value: Double, _ scale: Double) -> Double { (value * scale).rounded() / scale }
}
