import Foundation
import Testing

@testable import SessionProtocol

@Suite struct ServerMessageEncoderTests {
    let encoder = ServerMessageEncoder()

    /// Parses with Foundation (an independent parser) into a dictionary.
    func foundationObject(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func double(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    static let sampleTranscript = TranscriptUpdate(
        revision: 7,
        upserted: [
            WireUtterance(
                id: "u12", speaker: "Speaker 1", name: "Ana \"A\" \\ é\n", startSeconds: 0.1, endSeconds: 1.25,
                text: "hello world",
                words: [
                    WireWord(
                        text: "hello", startSeconds: 0.1, endSeconds: 0.5, speaker: "Speaker 1",
                        speakerConfidence: 0.875, confidence: 0.99, isFinal: true, isStored: true),
                    WireWord(
                        text: "world", startSeconds: 0.6, endSeconds: 1.25, speaker: "Speaker 1",
                        speakerConfidence: 1, confidence: nil, isFinal: false, isStored: false),
                ]),
            WireUtterance(
                id: "u13", speaker: nil, name: nil, startSeconds: 3, endSeconds: 3.5, text: "hm",
                words: [
                    WireWord(
                        text: "hm", startSeconds: 3, endSeconds: 3.5, speaker: nil, speakerConfidence: nil,
                        confidence: 1e-5, isFinal: true, isStored: true)
                ]),
        ],
        removed: ["u3", "u4"], isFinal: false)

    @Test func transcriptRoundTrips() throws {
        let text = encoder.encode(.transcript(Self.sampleTranscript))
        let object = try foundationObject(text)
        #expect(object["type"] as? String == "transcript")
        #expect(double(object["revision"]) == 7)
        #expect(object["final"] as? Bool == false)
        #expect(object["removed"] as? [String] == ["u3", "u4"])
        let utterances = try #require(object["upserted"] as? [[String: Any]])
        #expect(utterances.count == 2)
        for (decoded, original) in zip(utterances, Self.sampleTranscript.upserted) {
            #expect(decoded["id"] as? String == original.id)
            #expect(decoded["speaker"] as? String == original.speaker)
            #expect(decoded["name"] as? String == original.name)
            #expect(decoded.keys.contains("speaker"), "absent values are written as null")
            #expect(double(decoded["start"]) == original.startSeconds)
            #expect(double(decoded["end"]) == original.endSeconds)
            #expect(decoded["text"] as? String == original.text)
            let words = try #require(decoded["words"] as? [[String: Any]])
            #expect(words.count == original.words.count)
            for (word, expected) in zip(words, original.words) {
                #expect(word["text"] as? String == expected.text)
                #expect(double(word["start"]) == expected.startSeconds)
                #expect(double(word["end"]) == expected.endSeconds)
                #expect(word["speaker"] as? String == expected.speaker)
                #expect(double(word["speaker_confidence"]) == expected.speakerConfidence)
                #expect(double(word["confidence"]) == expected.confidence)
                #expect(word["final"] as? Bool == expected.isFinal)
                #expect(word["stored"] as? Bool == expected.isStored)
                #expect(Set(word.keys) == ["text", "start", "end", "speaker", "speaker_confidence", "confidence", "final", "stored"])
            }
        }
    }

    @Test func sessionRoundTrips() throws {
        let info = SessionInfo(
            conversationID: "c-9", provider: "energy", sampleRate: 44_100, encoding: .pcmF32LE, asr: .server, resumed: true,
            audioOffsetSeconds: 61.25, serverVersion: "0.1.0")
        let object = try foundationObject(encoder.encode(.session(info)))
        #expect(object["asr"] as? String == "server")
        #expect(object["type"] as? String == "session")
        #expect(object["conversation_id"] as? String == "c-9")
        #expect(object["provider"] as? String == "energy")
        #expect(double(object["sample_rate"]) == 44_100)
        #expect(object["encoding"] as? String == "pcm_f32le")
        #expect(object["resumed"] as? Bool == true)
        #expect(double(object["audio_offset_seconds"]) == 61.25)
        #expect(object["server_version"] as? String == "0.1.0")
        #expect(double(object["protocol_version"]) == 1)
    }

    @Test func speakersAndErrorRoundTrip() throws {
        let speakers = try foundationObject(
            encoder.encode(
                .speakers([
                    WireSpeaker(label: "Speaker 1", name: "Ana"),
                    WireSpeaker(label: "Speaker 2", name: "Speaker 2", mergedInto: "Speaker 1"),
                ])))
        #expect(speakers["type"] as? String == "speakers")
        let list = try #require(speakers["speakers"] as? [[String: Any]])
        #expect(list.map { $0["label"] as? String } == ["Speaker 1", "Speaker 2"])
        #expect(list.map { $0["name"] as? String } == ["Ana", "Speaker 2"])
        #expect(list[0]["merged_into"] is NSNull)
        #expect(list[1]["merged_into"] as? String == "Speaker 1")

        for code in ProtocolErrorCode.allCases {
            let error = try foundationObject(
                encoder.encode(.error(WireError(code: code, message: "bad \u{01} thing", fatal: code.disposition().isFatal))))
            #expect(error["type"] as? String == "error")
            #expect(error["code"] as? String == code.rawValue)
            #expect(error["message"] as? String == "bad \u{01} thing")
            #expect(error["fatal"] as? Bool == code.disposition().isFatal)
        }
    }

    @Test func statsRoundTrips() throws {
        let stats = SessionStats(
            audioSeconds: 30.5, wordCount: 3, unlabelledWordCount: 1, speakerCount: 2,
            firstLabelLatenciesSeconds: [0.25, 1.5], finalLabelLatenciesSeconds: [0.25, 4],
            chunkProcessingSeconds: [0.001, 0.002], realTimeFactor: nil,
            liveTurns: [WireTurn(speaker: "Speaker 1", startSeconds: 0, endSeconds: 1.5)],
            finalTurns: [WireTurn(speaker: "Speaker 2", startSeconds: 0.5, endSeconds: 2)])
        let object = try foundationObject(encoder.encode(.stats(stats)))
        #expect(object["type"] as? String == "stats")
        #expect(double(object["audio_seconds"]) == 30.5)
        #expect(object["words"] as? Int == 3 && object["unlabelled_words"] as? Int == 1 && object["speakers"] as? Int == 2)
        #expect((object["first_label_latency_seconds"] as? [NSNumber])?.map(\.doubleValue) == [0.25, 1.5])
        #expect((object["final_label_latency_seconds"] as? [NSNumber])?.map(\.doubleValue) == [0.25, 4])
        #expect((object["chunk_processing_seconds"] as? [NSNumber])?.map(\.doubleValue) == [0.001, 0.002])
        #expect(object["real_time_factor"] is NSNull)
        let live = try #require(object["live_turns"] as? [[String: Any]])
        #expect(live.count == 1 && live[0]["speaker"] as? String == "Speaker 1" && double(live[0]["end"]) == 1.5)
        let final = try #require(object["final_turns"] as? [[String: Any]])
        #expect(final.count == 1 && final[0]["speaker"] as? String == "Speaker 2" && double(final[0]["start"]) == 0.5)
    }

    @Test func outputIsDeterministicWithFixedFieldOrder() {
        let first = encoder.encode(.transcript(Self.sampleTranscript))
        let second = ServerMessageEncoder().encode(.transcript(Self.sampleTranscript))
        #expect(first == second)
        #expect(first.hasPrefix(#"{"type":"transcript","revision":7,"final":false,"upserted":[{"id":"u12","#))
        #expect(first.hasSuffix(#""removed":["u3","u4"]}"#))
        #expect(
            encoder.encode(.error(WireError(code: .notStarted, message: "m", fatal: false)))
                == #"{"type":"error","code":"not_started","message":"m","fatal":false}"#)
    }

    @Test func matchesTheWorkedExampleInTheDocs() {
        let info = SessionInfo(
            conversationID: "standup-2024-05-02", provider: "device", sampleRate: 16_000, encoding: .pcmS16LE,
            resumed: false, audioOffsetSeconds: 0, serverVersion: "0.1.0")
        #expect(
            encoder.encode(.session(info))
                == #"{"type":"session","conversation_id":"standup-2024-05-02","provider":"device","sample_rate":16000,"encoding":"pcm_s16le","asr":"device","resumed":false,"audio_offset_seconds":0,"server_version":"0.1.0","protocol_version":1}"#
        )
        let error = ProtocolError(.invalidTimestamp, "words.words[0]: end 2.1 is before start 2.3")
        #expect(
            encoder.encode(.error(WireError(error, fatal: false)))
                == #"{"type":"error","code":"invalid_timestamp","message":"words.words[0]: end 2.1 is before start 2.3","fatal":false}"#
        )
    }

    @Test func ownParserReadsTheEncoderOutputBack() throws {
        let text = encoder.encode(.transcript(Self.sampleTranscript))
        guard case .object(let object) = try JSONParser().parse(text),
            case .array(let utterances)? = object["upserted"],
            case .object(let first)? = utterances.first
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(first["name"] == .string("Ana \"A\" \\ é\n"))
        #expect(first["start"] == .number(0.1))
    }

    @Test func numbersUseShortestRoundTripForm() {
        #expect(JSONTextWriter.format(12) == "12")
        #expect(JSONTextWriter.format(-0.0) == "0")
        #expect(JSONTextWriter.format(0.1) == "0.1")
        #expect(JSONTextWriter.format(.nan) == "null")
        #expect(JSONTextWriter.format(.infinity) == "null")
        for value in [1e-5, 1e20, 123_456_789.123, 2.5e300, 1.0 / 3] {
            #expect(Double(JSONTextWriter.format(value)) == value)
        }
    }
}
