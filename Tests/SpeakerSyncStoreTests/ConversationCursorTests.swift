import Foundation
import SpeakerSyncStore
import Testing

@Suite struct ConversationCursorTests {
    @Test func aCursorNamesTheRowItWasWrittenFor() throws {
        let cursor = ConversationCursor.encode(startedAt: "2024-05-02 09:15:00.123456+00", id: "standup-2024-05-02")
        let decoded = try #require(ConversationCursor.decode(cursor))
        #expect(decoded.startedAt == "2024-05-02 09:15:00.123456+00")
        #expect(decoded.id == "standup-2024-05-02")
    }

    @Test(arguments: ["not base64!", Data("no bar".utf8).base64EncodedString(), ""])
    func refusesWhatThisServerDidNotWrite(cursor: String) {
        #expect(ConversationCursor.decode(cursor) == nil)
    }

    /// Found by Fuzz/FuzzConversationCursor: `AHxw` is "\0|p", whose NUL libpq's C-string parameter
    /// would have cut short; bytes that are not UTF-8 were replaced. Both are refused.
    @Test func refusesNULAndBytesThatAreNotUTF8() {
        #expect(ConversationCursor.decode("AHxw") == nil)
        #expect(ConversationCursor.decode(Data([0x32, 0xC3, 0x28, 0x7C, 0x61]).base64EncodedString()) == nil)
    }

    /// Found by Fuzz/FuzzConversationCursor: an id starting with a combining mark (U+0362) joined the
    /// bar into one Character, and the cursor split at a later `|` inside the id.
    @Test func splitsAtTheFirstBarEvenBeforeACombiningMark() throws {
        let id = "\u{0362}x|y"
        let decoded = try #require(ConversationCursor.decode(ConversationCursor.encode(startedAt: "f", id: id)))
        #expect(decoded.startedAt == "f")
        #expect(decoded.id == id)
    }
}
