import Testing
import TranscriptMerge

@testable import SessionProtocol

/// What an in-process device sends reads back, through the server's own decoder, as the message it encoded.
@Suite struct ClientMessageEncoderTests {
    let encoder = ClientMessageEncoder()
    let decoder = ClientMessageDecoder()

    static var fullStart: StartRequest {
        var start = StartRequest(conversationID: "test-abc-energy", deviceID: "phone \"1\" é", provider: "energy", sampleRate: 16_000,
                                 encoding: .pcmS16LE, language: "en-US", optionsJSON: #"{"max_speakers":3,"mode":"fast"}"#,
                                 audioOffsetSeconds: 12.5, asr: .server)
        start.shadowProviders = ["speakerkit", "none"]
        start.shadowOptionsJSON = ["speakerkit": #"{"threshold":0.5}"#, "none": "{}"]
        start.storeAudio = true
        return start
    }

    @Test(arguments: [
        ClientMessage.start(fullStart),
        .start(StartRequest(deviceID: "d", provider: "device", sampleRate: 48_000, encoding: .opus)),
        .words(WordsMessage(resultID: "r120", isFinal: false, words: [
            Word(text: "hello", startSeconds: 0.12, endSeconds: 0.5, confidence: 0.875),
            Word(text: "", startSeconds: 1, endSeconds: 1, confidence: nil),
        ])),
        .words(WordsMessage(resultID: "r0", isFinal: true, words: [])),
        .segments([DeviceSegment(speaker: "A", startSeconds: 0, endSeconds: 2.25, confidence: 0.5),
                   DeviceSegment(speaker: "B", startSeconds: 2, endSeconds: 3)]),
        .renameSpeaker(speaker: "Speaker 1", name: ""),
        .mergeSpeakers(from: "Speaker 2", into: "Speaker 1"),
        .finalize,
        .keepalive,
    ])
    func everyMessageReadsBackAsItWasEncoded(_ message: ClientMessage) throws {
        let text = encoder.encode(message)
        #expect(try decoder.decode(text) == message, "\(text)")
        #expect(text.hasPrefix(#"{"type":"\#(message.type.rawValue)""#))
    }

    @Test func aStartLeavesOutWhatItDoesNotSay() {
        var start = StartRequest(deviceID: "phone-1", provider: "energy", sampleRate: 16_000, encoding: .pcmS16LE)
        #expect(encoder.encode(.start(start))
            == #"{"type":"start","device_id":"phone-1","provider":"energy","sample_rate":16000,"encoding":"pcm_s16le"}"#)
        // A provider the start did not name is the server's to choose.
        start.providerNamed = false
        #expect(!encoder.encode(.start(start)).contains("provider"))
    }
}
