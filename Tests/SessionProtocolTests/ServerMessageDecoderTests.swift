import Testing

@testable import SessionProtocol

/// A device inside the server reads the server's messages back into the types they were encoded from.
@Suite struct ServerMessageDecoderTests {
    let encoder = ServerMessageEncoder()
    let decoder = ServerMessageDecoder()

    @Test(arguments: [
        ServerMessage.session(SessionInfo(conversationID: "c-1", provider: "energy", sampleRate: 16_000, encoding: .pcmS16LE, asr: .server,
                                          resumed: true, audioOffsetSeconds: 3.25, serverVersion: "0.1.0", providerSource: "device")),
        .session(SessionInfo(conversationID: "c-2", provider: "none", sampleRate: 48_000, encoding: .opus, resumed: false,
                             audioOffsetSeconds: 0, serverVersion: "x")),
        .transcript(ServerMessageEncoderTests.sampleTranscript),
        .transcript(TranscriptUpdate(revision: 1, upserted: [], removed: [], isFinal: true)),
        .speakers([WireSpeaker(label: "Speaker 1", name: "Ana"), WireSpeaker(label: "Speaker 2", name: "Speaker 2", mergedInto: "Speaker 1")]),
        .error(WireError(code: .providerFailed, message: "provider energy crashed", fatal: true)),
        .stats(SessionStats(audioSeconds: 31.6, wordCount: 53, unlabelledWordCount: 1, speakerCount: 2,
                            firstLabelLatenciesSeconds: [0.1, 0.25], finalLabelLatenciesSeconds: [0.1, 2], chunkProcessingSeconds: [0.001],
                            realTimeFactor: 0.02, liveTurns: [WireTurn(speaker: "Speaker 1", startSeconds: 0, endSeconds: 1.5)],
                            finalTurns: [WireTurn(speaker: "Speaker 1", startSeconds: 0, endSeconds: 1.25),
                                         WireTurn(speaker: "Speaker 2", startSeconds: 1.25, endSeconds: 3)])),
        .stats(SessionStats(audioSeconds: 0, wordCount: 0, unlabelledWordCount: 0, speakerCount: 0, firstLabelLatenciesSeconds: [],
                            finalLabelLatenciesSeconds: [], chunkProcessingSeconds: [], realTimeFactor: nil, liveTurns: [], finalTurns: [])),
    ])
    func everyMessageReadsBackAsItWasEncoded(_ message: ServerMessage) throws {
        #expect(try decoder.decode(encoder.encode(message)) == message)
    }

    @Test(arguments: [
        (#"{"type":"session"}"#, ProtocolErrorCode.missingField),
        (#"{"type":"error","code":"provider_failed","message":"m","fatal":1}"#, .invalidField),
        (#"{"type":"error","code":"no_such_code","message":"m","fatal":true}"#, .invalidField),
        (#"{"type":"transcript","revision":-1,"final":false,"upserted":[],"removed":[]}"#, .invalidField),
        (#"{"type":"hello"}"#, .unknownType),
        (#"[1]"#, .malformedJSON),
        (#"{"type":"stats""#, .malformedJSON),
    ])
    func whatTheServerNeverSendsIsRefusedWithItsCode(_ text: String, _ code: ProtocolErrorCode) {
        #expect { try decoder.decode(text) } throws: { ($0 as? ProtocolError)?.code == code }
    }
}
