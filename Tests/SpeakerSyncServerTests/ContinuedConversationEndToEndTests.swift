import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// A conversation continued by a second recording (the app relaunched, or `stream --conversation-id`):
/// the second session's words are timed on its own recording and its result ids count from its own
/// start, exactly like the first's. Every word of both is stored, none replaced.
@Suite(.serialized) struct ContinuedConversationEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    @Test func aSecondRecordingOfTheSameConversationReplacesNoWordOfTheFirst() async throws {
        let server = try TestServer()
        let audio = [Float](repeating: 0, count: 32_000) // 2 s of silence at 16 kHz
        let words = [DeviceWord(text: "hello", startSeconds: 0.2, endSeconds: 0.5),
                     DeviceWord(text: "there", startSeconds: 1.2, endSeconds: 1.5)]
        var first = DeviceStreamConfig(url: server.ws, provider: "none", deviceID: "phone-c")
        first.conversationID = "continued-1"
        let firstReport = try await server.stream(first, audio: audio, sampleRate: 16_000, words: words)
        #expect(firstReport.closeCode == 1000)

        // The same words file again, as the next part: same texts, same times on its own recording,
        // hence the same result ids ("r200", "r1200") as the first part's.
        let later = [DeviceWord(text: "again", startSeconds: 0.2, endSeconds: 0.5),
                     DeviceWord(text: "later", startSeconds: 1.2, endSeconds: 1.5)]
        let secondReport = try await server.stream(first, audio: audio, sampleRate: 16_000, words: later)
        #expect(secondReport.closeCode == 1000)

        let stored = try server.storedWords("continued-1")
        #expect(stored.map(\.text) == ["hello", "there", "again", "later"])
        #expect(stored.map(\.start) == [0.2, 1.2, 2.2, 3.2])
    }
}
