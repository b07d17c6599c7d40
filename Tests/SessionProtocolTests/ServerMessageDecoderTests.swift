import Testing

@testable import SessionProtocol

@Suite struct ServerMessageDecoderTests {
    let encoder = ServerMessageEncoder()
    let decoder = ServerMessageDecoder()

    /// The kinds of server message; `kind(of:)` switches exhaustively, so a new case does not compile
    /// until it is named here, and `everyMessageKindRoundTrips` then wants a sample of it.
    enum Kind: CaseIterable { case session, transcript, speakers, error, stats }

    static func kind(of message: ServerMessage) -> Kind {
        switch message {
        case .session: .session
        case .transcript: .transcript
        case .speakers: .speakers
        case .error: .error
        case .stats: .stats
        }
    }

    static let samples: [ServerMessage] = [
        .session(SessionInfo(
            conversationID: "standup-1", provider: "speakerkit", sampleRate: 16_000, encoding: .pcmS16LE, asr: .server,
            resumed: true, audioOffsetSeconds: 12.34, serverVersion: "0.1.0", providerSource: "device")),
        .session(SessionInfo(
            conversationID: "c", provider: "none", sampleRate: 48_000, encoding: .opus, resumed: false, audioOffsetSeconds: 0,
            serverVersion: "", protocolVersion: 1)),
        .transcript(ServerMessageEncoderTests.sampleTranscript),
        .transcript(TranscriptUpdate(revision: 1, upserted: [], removed: [], isFinal: true)),
        .speakers([WireSpeaker(label: "Speaker 1", name: "Ana \"A\" \u{2028}"),
                   WireSpeaker(label: "Speaker 2", name: "Speaker 2", mergedInto: "Speaker 1")]),
        .speakers([]),
        .error(WireError(code: .providerUnavailable, message: "shadow provider falcon is unavailable: no key", fatal: true)),
        .error(WireError(code: .invalidText, message: "", fatal: false)),
        .stats(SessionStats(
            audioSeconds: 30, wordCount: 72, unlabelledWordCount: 1, speakerCount: 2,
            firstLabelLatenciesSeconds: [0.41, 0.38], finalLabelLatenciesSeconds: [0.41, 2.1],
            chunkProcessingSeconds: [0.0004, 1e-7], realTimeFactor: 0.004,
            liveTurns: [WireTurn(speaker: "Speaker 1", startSeconds: 0.5, endSeconds: 3.2)],
            finalTurns: [WireTurn(speaker: "Speaker 1", startSeconds: 0.5, endSeconds: 3.4),
                         WireTurn(speaker: "Speaker 2", startSeconds: 3.4, endSeconds: 30)])),
        .stats(SessionStats(
            audioSeconds: 0, wordCount: 0, unlabelledWordCount: 0, speakerCount: 0, firstLabelLatenciesSeconds: [],
            finalLabelLatenciesSeconds: [], chunkProcessingSeconds: [], realTimeFactor: nil, liveTurns: [], finalTurns: [])),
    ]

    @Test func everyMessageKindRoundTripsThroughTheEncoder() throws {
        #expect(Set(Self.samples.map(Self.kind)) == Set(Kind.allCases), "a sample of every kind")
        for message in Self.samples {
            let text = encoder.encode(message)
            #expect(try decoder.decode(text) == message, "\(text)")
        }
    }

    @Test func everyErrorCodeRoundTrips() throws {
        for code in ProtocolErrorCode.allCases {
            let error = WireError(code: code, message: "m", fatal: code.disposition().isFatal)
            #expect(try decoder.decode(encoder.encode(.error(error))) == .error(error))
        }
    }

    @Test func anOlderServerWithoutTheLaterSessionFieldsIsReadWithTheirDefaults() throws {
        let message = try decoder.decode(
            #"{"type":"session","conversation_id":"c","provider":"energy","sample_rate":16000,"encoding":"pcm_s16le","resumed":false,"audio_offset_seconds":0,"server_version":"0.0.9","protocol_version":1,"extra":{"x":1}}"#)
        guard case .session(let info) = message else {
            Issue.record("not a session: \(message)")
            return
        }
        #expect(info.asr == .device)
        #expect(info.providerSource == nil)
    }

    @Test func aNewerServersErrorCodeIsKeptAsWritten() throws {
        let message = try decoder.decode(#"{"type":"error","code":"brand_new","message":"m","fatal":true}"#)
        guard case .error(let error) = message else {
            Issue.record("not an error: \(message)")
            return
        }
        #expect(error.codeName == "brand_new")
        #expect(error.unknownCode == "brand_new")
        #expect(error.fatal)
    }

    @Test func refusesWhatIsNotAServerMessageWithTheReason() {
        #expect(throws: ProtocolError.self) { try decoder.decode("{") }
        #expect(throws: ProtocolError(.unknownType, #"unknown server message type "hello""#)) {
            try decoder.decode(#"{"type":"hello"}"#)
        }
        #expect(throws: ProtocolError(.missingField, #"speakers: missing field "speakers""#)) {
            try decoder.decode(#"{"type":"speakers"}"#)
        }
        #expect(throws: ProtocolError(.invalidField, #"error: field "fatal" must be true or false, got a number"#)) {
            try decoder.decode(#"{"type":"error","code":"internal_error","message":"m","fatal":1}"#)
        }
        #expect(throws: ProtocolError(.invalidField, #"transcript: field "revision" must be a whole number ≥ 0, got 1.5"#)) {
            try decoder.decode(#"{"type":"transcript","revision":1.5,"final":false,"upserted":[],"removed":[]}"#)
        }
    }
}
