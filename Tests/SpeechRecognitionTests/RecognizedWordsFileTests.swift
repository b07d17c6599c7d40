import Foundation
import SpeakerSyncClient
import Testing
@testable import SpeechRecognition

@Suite struct RecognizedWordsFileTests {
    /// What `speakersync words` writes is what `speakersync stream --words` reads.
    @Test func theClientReadsWhatTheRecogniserWrites() throws {
        let speech = try Fixtures.speak("please send me the report before friday")
        let words = try PocketSphinxRecognizer(logger: Fixtures.logger).recognize(speech)
        try #require(!words.isEmpty)
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-words-\(UUID().uuidString)/out.words.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try RecognizedWordsFile.write(words, to: url)

        let read = try DeviceInput.readWords(path: url.path)
        #expect(read.count == words.count)
        for (device, recognised) in zip(read, words) {
            #expect(device.text == recognised.text)
            #expect(abs(device.startSeconds - recognised.startSeconds) <= 0.0005)
            #expect(abs(device.endSeconds - recognised.endSeconds) <= 0.0005)
            #expect(abs((device.confidence ?? -1) - recognised.confidence) <= 0.0005)
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        #expect(Array(root.keys) == ["words"])
        let first = try #require((root["words"] as? [[String: Any]])?.first)
        #expect(Set(first.keys) == ["text", "start", "end", "confidence"])
    }

    @Test func writingIntoAnUnwritablePlaceGivesIOError() throws {
        let word = RecognizedWord(text: "hello", startSeconds: 0, endSeconds: 0.5, confidence: 1)
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("words-blocker-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: blocker.path, contents: Data())
        defer { try? FileManager.default.removeItem(at: blocker) }
        // A regular file stands where the folder should be.
        let error = try #require(throws: RecognizerError.self) {
            try RecognizedWordsFile.write([word], to: blocker.appendingPathComponent("x.json"))
        }
        #expect(error.code == .io)
    }
}
