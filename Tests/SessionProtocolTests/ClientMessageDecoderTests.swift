import Testing

@testable import SessionProtocol

@Suite struct ClientMessageDecoderTests {
    let decoder = ClientMessageDecoder()

    @Test func decodesStartWithEveryField() throws {
        let text = """
            {"type":"start","conversation_id":"meet-2024.05:a_1","device_id":"iphone-7","provider":"device",
             "sample_rate":44100,"encoding":"pcm_f32le","language":"en-US",
             "options":{"z":1,"a":{"k":[true,null,"s"]}},"audio_offset_seconds":12.5}
            """
        let message = try decoder.decode(text)
        #expect(
            message
                == .start(
                    StartRequest(
                        conversationID: "meet-2024.05:a_1", deviceID: "iphone-7", provider: "device",
                        sampleRate: 44_100, encoding: .pcmF32LE, language: "en-US",
                        optionsJSON: #"{"a":{"k":[true,null,"s"]},"z":1}"#, audioOffsetSeconds: 12.5)))
    }

    @Test func startDefaultsOptionalFields() throws {
        let message = try decoder.decode(
            #"{"type":"start","device_id":"d","provider":"none","sample_rate":16000.0,"encoding":"pcm_s16le","language":null}"#)
        guard case .start(let start) = message else {
            Issue.record("not a start: \(message)")
            return
        }
        #expect(start.conversationID == nil)
        #expect(start.sampleRate == 16_000)
        #expect(start.language == nil)
        #expect(start.optionsJSON == "{}")
        #expect(start.audioOffsetSeconds == nil)
    }

    @Test func decodesWordsWithIntegerAndFractionalTimes() throws {
        let message = try decoder.decode(
            #"{"type":"words","result_id":"r1","final":false,"words":[{"text":"hello","start":0,"end":0.5,"confidence":0.9},{"text":"world","start":0.5,"end":1}]}"#
        )
        #expect(
            message
                == .words(
                    WordsMessage(
                        resultID: "r1", isFinal: false,
                        words: [
                            WireInputWord(text: "hello", startSeconds: 0, endSeconds: 0.5, confidence: 0.9),
                            WireInputWord(text: "world", startSeconds: 0.5, endSeconds: 1, confidence: nil),
                        ])))
    }

    @Test func emptyWordsReplaceAResultWithNothing() throws {
        let message = try decoder.decode(#"{"type":"words","result_id":"r1","final":true,"words":[]}"#)
        #expect(message == .words(WordsMessage(resultID: "r1", isFinal: true, words: [])))
    }

    @Test func decodesSegmentsRenameMergeFinalizeKeepalive() throws {
        #expect(
            try decoder.decode(
                #"{"type":"segments","segments":[{"speaker":"A","start":1,"end":2.25,"confidence":1},{"speaker":"B","start":2.25,"end":2.25}]}"#
            )
                == .segments([
                    DeviceSegment(speaker: "A", startSeconds: 1, endSeconds: 2.25, confidence: 1),
                    DeviceSegment(speaker: "B", startSeconds: 2.25, endSeconds: 2.25),
                ]))
        #expect(
            try decoder.decode(#"{"type":"rename_speaker","speaker":"Speaker 1","name":"Ana \u00e9 \ud83d\ude00"}"#)
                == .renameSpeaker(speaker: "Speaker 1", name: "Ana é 😀"))
        #expect(try decoder.decode(#"{"type":"rename_speaker","speaker":"Speaker 1","name":""}"#)
            == .renameSpeaker(speaker: "Speaker 1", name: ""))
        #expect(
            try decoder.decode(#"{"type":"merge_speakers","from":"Speaker 2","into":"Speaker 1"}"#)
                == .mergeSpeakers(from: "Speaker 2", into: "Speaker 1"))
        #expect(try decoder.decode(#"{"type":"finalize"}"#) == .finalize)
        #expect(try decoder.decode(#" { "type" : "keepalive", "extra": [1,2] } "#) == .keepalive)
    }

    static let invalidCases: [(String, ProtocolErrorCode)] = [
        // JSON level
        ("", .malformedJSON),
        ("{", .malformedJSON),
        (#"{"type":"finalize",}"#, .malformedJSON),
        (#"["type","finalize"]"#, .malformedJSON),
        (#""finalize""#, .malformedJSON),
        ("42", .malformedJSON),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":NaN,"end":1}]}"#, .malformedJSON),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":Infinity,"end":1}]}"#, .malformedJSON),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":1e400,"end":1}]}"#, .malformedJSON),
        (#"{"type":"finalize","type":"keepalive"}"#, .malformedJSON),
        // type
        (#"{"kind":"finalize"}"#, .missingField),
        (#"{"type":7}"#, .invalidField),
        (#"{"type":"hello"}"#, .unknownType),
        // start
        (#"{"type":"start","provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .missingField),
        (#"{"type":"start","device_id":"d","sample_rate":16000,"encoding":"pcm_s16le"}"#, .missingField),
        (#"{"type":"start","device_id":"d","provider":"none","encoding":"pcm_s16le"}"#, .missingField),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":16000}"#, .missingField),
        (#"{"type":"start","device_id":"","provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .invalidField),
        (#"{"type":"start","device_id":5,"provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .invalidField),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":"16000","encoding":"pcm_s16le"}"#, .invalidField),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":16000.5,"encoding":"pcm_s16le"}"#, .invalidField),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":7999,"encoding":"pcm_s16le"}"#, .unsupportedSampleRate),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":96000,"encoding":"pcm_s16le"}"#, .unsupportedSampleRate),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":16000,"encoding":"aac"}"#, .unsupportedEncoding),
        // Opus decodes only at 8, 12, 16, 24 and 48 kHz.
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":44100,"encoding":"opus"}"#, .unsupportedSampleRate),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":22050,"encoding":"opus"}"#, .unsupportedSampleRate),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le","options":[1]}"#, .invalidField),
        (#"{"type":"start","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le","audio_offset_seconds":-1}"#, .invalidField),
        (#"{"type":"start","conversation_id":"a b","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .invalidConversationID),
        (#"{"type":"start","conversation_id":"","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .invalidConversationID),
        (#"{"type":"start","conversation_id":"\#(String(repeating: "x", count: 129))","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le"}"#, .invalidConversationID),
        // words
        (#"{"type":"words","final":true,"words":[]}"#, .missingField),
        (#"{"type":"words","result_id":"r","words":[]}"#, .missingField),
        (#"{"type":"words","result_id":"r","final":true}"#, .missingField),
        (#"{"type":"words","result_id":"r","final":1,"words":[]}"#, .invalidField),
        (#"{"type":"words","result_id":"r","final":true,"words":{}}"#, .invalidField),
        (#"{"type":"words","result_id":"r","final":true,"words":["a"]}"#, .invalidField),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"start":0,"end":1}]}"#, .missingField),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","end":1}]}"#, .missingField),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":"0","end":1}]}"#, .invalidField),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":0,"end":1,"confidence":1.5}]}"#, .invalidField),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":-0.1,"end":1}]}"#, .invalidTimestamp),
        (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":2,"end":1}]}"#, .invalidTimestamp),
        // segments
        (#"{"type":"segments"}"#, .missingField),
        (#"{"type":"segments","segments":[{"start":0,"end":1}]}"#, .missingField),
        (#"{"type":"segments","segments":[{"speaker":"A","start":3,"end":1}]}"#, .invalidTimestamp),
        (#"{"type":"segments","segments":[{"speaker":"A","start":0,"end":-1}]}"#, .invalidTimestamp),
        // corrections
        (#"{"type":"rename_speaker","name":"x"}"#, .missingField),
        (#"{"type":"rename_speaker","speaker":"Speaker 1"}"#, .missingField),
        (#"{"type":"rename_speaker","speaker":"Speaker 1","name":false}"#, .invalidField),
        (#"{"type":"merge_speakers","from":"Speaker 1"}"#, .missingField),
        (#"{"type":"merge_speakers","from":"Speaker 1","into":"Speaker 1"}"#, .invalidField),
    ]

    @Test(arguments: invalidCases)
    func rejectsWithSpecificCode(text: String, expected: ProtocolErrorCode) {
        #expect(throws: ProtocolError.self) { try decoder.decode(text) }
        do {
            _ = try decoder.decode(text)
        } catch {
            #expect(error.code == expected, "\(text) -> \(error.message)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func capsWordsPerMessage() throws {
        let small = ClientMessageDecoder(config: SessionConfig(maxWordsPerMessage: 3))
        func words(_ count: Int) -> String {
            let list = (0..<count).map { #"{"text":"w","start":\#($0),"end":\#($0 + 1)}"# }
            return #"{"type":"words","result_id":"r","final":true,"words":[\#(list.joined(separator: ","))]}"#
        }
        guard case .words(let accepted) = try small.decode(words(3)) else {
            Issue.record("not words")
            return
        }
        #expect(accepted.words.count == 3)
        #expect(throws: ProtocolError(.tooManyWords, "words: 4 words in one message; the limit is 3")) {
            try small.decode(words(4))
        }
        let segments = (0..<4).map { #"{"speaker":"A","start":\#($0),"end":\#($0 + 1)}"# }
        let segmentText = #"{"type":"segments","segments":[\#(segments.joined(separator: ","))]}"#
        #expect(throws: ProtocolError.self) { try small.decode(segmentText) }
    }

    @Test func defaultWordCapIsTenThousand() throws {
        let word = #"{"text":"w","start":1,"end":2}"#
        let text = #"{"type":"words","result_id":"r","final":true,"words":[\#(Array(repeating: word, count: 10_001).joined(separator: ","))]}"#
        do {
            _ = try decoder.decode(text)
            Issue.record("accepted 10,001 words")
        } catch {
            #expect(error.code == .tooManyWords)
        }
    }

    @Test func unknownProviderIsCheckedWhenTheServerListsProviders() throws {
        let strict = ClientMessageDecoder(config: SessionConfig(knownProviders: ["none", "device"]))
        let start = #"{"type":"start","device_id":"d","provider":"pyannote","sample_rate":16000,"encoding":"pcm_s16le"}"#
        do {
            _ = try strict.decode(start)
            Issue.record("accepted unknown provider")
        } catch {
            #expect(error.code == .unknownProvider)
            #expect(error.message.contains("device, none"))
        }
        // Without a provider list the decoder leaves the check to the server.
        #expect(throws: Never.self) { try decoder.decode(start) }
    }

    @Test func errorMessageNamesTheOffendingWord() {
        do {
            _ = try decoder.decode(#"{"type":"words","result_id":"r2","final":true,"words":[{"text":"hi","start":2.3,"end":2.1}]}"#)
            Issue.record("accepted reversed word")
        } catch {
            #expect(error == ProtocolError(.invalidTimestamp, "words.words[0]: end 2.1 is before start 2.3"))
        }
    }

    @Test func overlongStringsAreInvalid() {
        let small = ClientMessageDecoder(config: SessionConfig(maxStringLength: 8))
        do {
            _ = try small.decode(#"{"type":"rename_speaker","speaker":"Speaker 1","name":"123456789"}"#)
            Issue.record("accepted overlong name")
        } catch {
            #expect(error.code == .invalidField)
        }
    }
}
