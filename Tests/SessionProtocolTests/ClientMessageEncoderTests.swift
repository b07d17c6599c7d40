import Foundation
import Testing

@testable import SessionProtocol

@Suite struct ClientMessageEncoderTests {
    let encoder = ClientMessageEncoder()
    let decoder = ClientMessageDecoder()

    /// One message of every type, with awkward values: escapes, fractions, absent and present optionals.
    static let samples: [ClientMessage] = {
        var start = StartRequest(
            conversationID: "meet-2024.05:a_1", deviceID: "iphone/7 \"Anna\"", provider: "sherpa-onnx", sampleRate: 16_000,
            encoding: .opus, language: "en-US", optionsJSON: #"{"a":{"k":[true,null,"s/t"]},"z":0.1}"#,
            audioOffsetSeconds: 12.5, asr: .server)
        start.shadowProviders = ["energy", "falcon"]
        start.shadowOptionsJSON = ["energy": #"{"threshold":0.25}"#]
        start.storeAudio = true
        return [
            .start(start),
            .start(StartRequest(deviceID: "d", provider: "none", sampleRate: 8_000, encoding: .pcmS16LE)),
            .words(WordsMessage(resultID: "r1", isFinal: false, words: [
                WireInputWord(text: "hello", startSeconds: 0, endSeconds: 0.30000000000000004, confidence: 0.93),
                WireInputWord(text: "and/or \u{2028} é \u{1} \\", startSeconds: 1e-5, endSeconds: 12),
                WireInputWord(text: "", startSeconds: 12, endSeconds: 12),
            ])),
            .words(WordsMessage(resultID: "r2", isFinal: true, words: [])),
            .segments([DeviceSegment(speaker: "spk_0", startSeconds: 11.9, endSeconds: 15.2, confidence: 0.8),
                       DeviceSegment(speaker: "spk_1", startSeconds: 15.2, endSeconds: 16)]),
            .renameSpeaker(speaker: "Speaker 1", name: "Anna \"A\""),
            .renameSpeaker(speaker: "Speaker 2", name: ""),
            .mergeSpeakers(from: "Speaker 3", into: "Speaker 1"),
            .finalize,
            .keepalive,
        ]
    }()

    @Test func everyMessageTypeRoundTripsThroughTheDecoder() throws {
        #expect(Set(Self.samples.map(\.type)) == Set(ClientMessageType.allCases), "a sample of every type")
        for message in Self.samples {
            let text = encoder.encode(message)
            #expect(try decoder.decode(text) == message, "\(text)")
        }
    }

    @Test func aStartWithOnlySomeFieldsIsCompletedByTheServer() throws {
        // A device with a device token leaves out device_id, and may leave out the provider.
        let text = encoder.encodeStart(StartParameters(conversationID: "c-1", sampleRate: 16_000, encoding: .pcmS16LE))
        #expect(text == #"{"conversation_id":"c-1","encoding":"pcm_s16le","sample_rate":16000,"type":"start"}"#)
        let envelope = try decoder.envelope(text)
        let decoded = try decoder.decode(envelope, startDefaults: StartParameters(deviceID: "from-token", provider: "energy"))
        let expected = StartRequest(conversationID: "c-1", deviceID: "from-token", provider: "energy", sampleRate: 16_000, encoding: .pcmS16LE)
        #expect(decoded == .start(expected))
    }

    @Test func optionsThatAreNotJSONAreLeftOut() {
        let text = encoder.encodeStart(StartParameters(provider: "energy", optionsJSON: "{not json"))
        #expect(text == #"{"provider":"energy","type":"start"}"#)
    }

    /// The kit built these messages with `JSONSerialization` (sorted keys) before the encoder existed;
    /// the encoder writes the same bytes, so moving the kit onto it changed nothing on the wire.
    @Test func bytesAreThoseJSONSerializationWroteWithSortedKeys() throws {
        func foundation(_ object: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        let words: [[String: Any]] = [
            ["text": "and/or", "start": 1.25, "end": 1.5, "confidence": 0.9], ["text": "é\u{1}\"", "start": 2.0, "end": 0.30000000000000004],
        ]
        #expect(encoder.encode(.words(WordsMessage(resultID: "r/1", isFinal: true, words: [
            WireInputWord(text: "and/or", startSeconds: 1.25, endSeconds: 1.5, confidence: 0.9),
            WireInputWord(text: "é\u{1}\"", startSeconds: 2, endSeconds: 0.30000000000000004),
        ]))) == (try foundation(["type": "words", "result_id": "r/1", "final": true, "words": words])))
        #expect(encoder.encode(.segments([DeviceSegment(speaker: "A", startSeconds: 0, endSeconds: 4.5)]))
            == (try foundation(["type": "segments", "segments": [["speaker": "A", "start": 0.0, "end": 4.5]]])))
        #expect(encoder.encode(.renameSpeaker(speaker: "Speaker 1", name: "Anna")) == (try foundation(["type": "rename_speaker", "speaker": "Speaker 1", "name": "Anna"])))
        #expect(encoder.encode(.mergeSpeakers(from: "Speaker 2", into: "Speaker 1")) == (try foundation(["type": "merge_speakers", "from": "Speaker 2", "into": "Speaker 1"])))
        #expect(encoder.encode(.finalize) == (try foundation(["type": "finalize"])))
        let start = StartParameters(
            conversationID: "c-1", deviceID: "dev", provider: "energy", sampleRate: 16_000, encoding: .pcmS16LE, language: "en",
            optionsJSON: #"{"min_speakers":2,"nested":{"b":[1.5,true],"a":"x/y"}}"#, audioOffsetSeconds: 3.25, asr: .device,
            shadowProviders: ["falcon"], shadowOptionsJSON: ["falcon": #"{"k":1}"#], storeAudio: true)
        let object: [String: Any] = [
            "type": "start", "conversation_id": "c-1", "device_id": "dev", "provider": "energy", "sample_rate": 16_000,
            "encoding": "pcm_s16le", "language": "en", "asr": "device", "shadow_providers": ["falcon"], "store_audio": true,
            "shadow_options": ["falcon": ["k": 1]], "options": ["min_speakers": 2, "nested": ["b": [1.5, true], "a": "x/y"]],
            "audio_offset_seconds": 3.25,
        ]
        #expect(encoder.encodeStart(start) == (try foundation(object)))
    }
}
