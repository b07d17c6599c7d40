import Foundation
import Testing
@testable import SessionProtocol

/// The session's messages as Deepgram's: words go out final once, with their speaker.
struct DeepgramResultsTests {
    static func word(_ text: String, _ start: Double, speaker: String?) -> WireWord {
        WireWord(text: text, startSeconds: start, endSeconds: start + 0.3, speaker: speaker,
                 speakerConfidence: speaker == nil ? nil : 0.9, confidence: 0.8, isFinal: true, isStored: false)
    }

    static func update(_ revision: UInt64, _ utterances: [(String, [WireWord])], final: Bool = false) -> ServerMessage {
        .transcript(TranscriptUpdate(revision: revision, upserted: utterances.map { id, words in
            WireUtterance(id: id, speaker: words.first?.speaker, name: words.first?.speaker,
                          startSeconds: words.first?.startSeconds ?? 0, endSeconds: words.last?.endSeconds ?? 0,
                          text: words.map(\.text).joined(separator: " "), words: words)
        }, removed: [], isFinal: final))
    }

    static func objects(_ texts: [String]) -> [[String: Any]] {
        texts.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func words(_ results: [String: Any]) -> [[String: Any]] {
        (((results["channel"] as? [String: Any])?["alternatives"] as? [[String: Any]])?.first?["words"] as? [[String: Any]]) ?? []
    }

    func translator(_ options: DeepgramOptions = DeepgramOptions(diarize: true, interimResults: true, utteranceEndMilliseconds: 1000, model: "nova-3")) -> DeepgramResults {
        var results = DeepgramResults(options: options, createdAt: "2026-11-28T00:00:00Z")
        let info = SessionInfo(conversationID: "conv-1", provider: "speakerkit", sampleRate: 16000, encoding: .pcmS16LE,
                               asr: .server, resumed: false, audioOffsetSeconds: 0, serverVersion: "test")
        #expect(results.translate(.session(info)).isEmpty)
        return results
    }

    @Test func aWordWaitsForItsSpeakerAndGoesOutFinalOnceWithDeepgramsNumbering() throws {
        var results = translator()
        // No speaker yet: only an interim result.
        let first = Self.objects(results.translate(Self.update(1, [("u1", [Self.word("hello", 1.0, speaker: nil), Self.word("there", 1.4, speaker: nil)])])))
        #expect(first.count == 1)
        #expect(first[0]["type"] as? String == "Results")
        #expect(first[0]["is_final"] as? Bool == false)
        #expect(Self.words(first[0]).compactMap { $0["speaker"] }.isEmpty)

        // The speakers arrive: final, speech_final, then UtteranceEnd (utterance_end_ms was set).
        let second = Self.objects(results.translate(Self.update(2, [("u1", [Self.word("hello", 1.0, speaker: "Speaker 2"), Self.word("there", 1.4, speaker: "Speaker 2")])])))
        #expect(second.map { $0["type"] as? String } == ["Results", "UtteranceEnd"])
        #expect(second[0]["is_final"] as? Bool == true)
        #expect(second[0]["speech_final"] as? Bool == true)
        #expect(Self.words(second[0]).map { $0["speaker"] as? Int } == [1, 1])
        #expect(Self.words(second[0]).map { $0["word"] as? String } == ["hello", "there"])
        #expect(second[0]["start"] as? Double == 1.0)
        #expect(second[0]["duration"] as? Double == 0.7)
        #expect(((second[0]["metadata"] as? [String: Any])?["request_id"]) as? String == "conv-1")
        #expect(second[1]["last_word_end"] as? Double == 1.7)

        // A relabelling after that is not sent again (a final result is never revised).
        #expect(results.translate(Self.update(3, [("u1", [Self.word("hello", 1.0, speaker: "Speaker 1"), Self.word("there", 1.4, speaker: "Speaker 1")])])).isEmpty)
    }

    @Test func anUnlabelledWordIsNotHeldOnceALaterOneHasASpeakerOrThreeSecondsPassed() {
        var results = translator(DeepgramOptions(diarize: true, model: "nova-3"))
        let out = Self.objects(results.translate(Self.update(1, [
            ("u1", [Self.word("um", 1.0, speaker: nil)]),
            ("u2", [Self.word("yes", 2.0, speaker: "Speaker 1")]),
            ("u3", [Self.word("so", 3.0, speaker: nil)]),
        ])))
        #expect(out.count == 1)
        #expect(Self.words(out[0]).map { $0["word"] as? String } == ["um", "yes"])
        #expect(out[0]["speech_final"] as? Bool == false)
        // "so" is held until 3 s of later speech arrive, then goes without a speaker.
        let later = Self.objects(results.translate(Self.update(2, [("u4", [Self.word("okay", 6.5, speaker: nil)])])))
        #expect(later.count == 1)
        #expect(Self.words(later[0]).map { $0["word"] as? String } == ["so"])
        #expect(Self.words(later[0])[0]["speaker"] == nil)
    }

    @Test func finalizeFlushesWhatIsHeldAndTheEndCarriesMetadata() {
        var results = translator(DeepgramOptions(diarize: true, model: "nova-3"))
        #expect(results.translate(Self.update(1, [("u1", [Self.word("wait", 1.0, speaker: nil)])])).isEmpty)
        let flushed = Self.objects(results.flush(fromFinalize: true))
        #expect(flushed.count == 1)
        #expect(flushed[0]["from_finalize"] as? Bool == true)
        #expect(results.flush(fromFinalize: true).isEmpty)

        _ = results.translate(Self.update(2, [("u2", [Self.word("bye", 4.0, speaker: nil)])]))
        let end = Self.objects(results.translate(Self.update(3, [("u2", [Self.word("bye", 4.0, speaker: "Speaker 1")])], final: true)))
        #expect(Self.words(end[0]).map { $0["speaker"] as? Int } == [0])
        let stats = SessionStats(audioSeconds: 5.5, wordCount: 2, unlabelledWordCount: 0, speakerCount: 1,
                                 firstLabelLatenciesSeconds: [], finalLabelLatenciesSeconds: [], chunkProcessingSeconds: [],
                                 realTimeFactor: nil, liveTurns: [], finalTurns: [])
        let metadata = Self.objects(results.translate(.stats(stats)))
        #expect(metadata.first?["type"] as? String == "Metadata")
        #expect(metadata.first?["request_id"] as? String == "conv-1")
        #expect(metadata.first?["duration"] as? Double == 5.5)
    }

    @Test func withoutDiarizeWordsGoAtOnceWithoutSpeakers() {
        var results = translator(DeepgramOptions(diarize: false, model: "nova-3"))
        let out = Self.objects(results.translate(Self.update(1, [("u1", [Self.word("hi", 1.0, speaker: "Speaker 1")])])))
        #expect(out.count == 1)
        #expect(Self.words(out[0])[0]["speaker"] == nil)
    }

    @Test func errorsBecomeDeepgramErrors() {
        var results = translator()
        let out = Self.objects(results.translate(.error(WireError(code: .invalidAudio, message: "bad audio", fatal: true))))
        #expect(out.first?["type"] as? String == "Error")
        #expect(out.first?["code"] as? String == "invalid_audio")
        #expect(out.first?["description"] as? String == "bad audio")
    }
}
