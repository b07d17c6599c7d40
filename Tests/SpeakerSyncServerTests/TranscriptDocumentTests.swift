import Foundation
import Testing
import TranscriptMerge
@testable import SpeakerSyncServer

@Suite struct TranscriptDocumentTests {
    /// Builds a document through the real merger, so the formats see what a session would produce.
    func document() -> TranscriptDocument {
        var merger = TranscriptMerger()
        _ = merger.upsertTurns([
            SpeakerTurn(id: "t1", speaker: "Speaker 1", startSeconds: 0, endSeconds: 2),
            SpeakerTurn(id: "t2", speaker: "Speaker 2", startSeconds: 2.5, endSeconds: 4),
        ])
        _ = merger.upsertResult(id: "r1", words: [
            Word(text: "hello", startSeconds: 0.2, endSeconds: 0.6),
            Word(text: "there", startSeconds: 0.7, endSeconds: 1.1),
            Word(text: "hi", startSeconds: 2.6, endSeconds: 2.9),
            Word(text: "later", startSeconds: 9, endSeconds: 9.4),
        ], isFinal: true)
        return TranscriptDocument(conversationID: "c1", utterances: merger.utterances, names: ["Speaker 2": "Alice"])
    }

    @Test func textHasOneLinePerUtteranceWithNames() {
        #expect(document().plainText() == "Speaker 1: hello there\nAlice: hi\nUnknown: later\n")
    }

    @Test func jsonHasTheCLIShape() throws {
        let text = document().jsonText()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["conversation_id"] as? String == "c1")
        let utterances = try #require(root["utterances"] as? [[String: Any]])
        #expect(utterances.count == 3)
        #expect(utterances[1]["name"] as? String == "Alice")
        #expect(utterances[1]["speaker"] as? String == "Speaker 2")
        #expect(utterances[2]["speaker"] is NSNull)
        let words = try #require(utterances[0]["words"] as? [[String: Any]])
        #expect(words.map { $0["text"] as? String } == ["hello", "there"])
        #expect(words[0]["start"] as? Double == 0.2)
    }

    @Test func subtitleFormatsUseClockTimes() {
        let srt = document().subRip()
        #expect(srt.hasPrefix("1\n00:00:00,200 --> 00:00:01,100\nSpeaker 1: hello there\n"))
        let vtt = document().webVTT()
        #expect(vtt.hasPrefix("WEBVTT\n\n"))
        #expect(vtt.contains("00:00:02.600 --> 00:00:02.900\n<v Alice>hi"))
    }

    @Test func rttmListsLabelledUtterancesOnly() {
        let lines = document().rttm().split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0] == "SPEAKER c1 1 0.200 0.900 <NA> <NA> Speaker_1 <NA> <NA>")
    }
}
