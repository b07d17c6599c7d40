import Testing

@testable import SessionProtocol

@Suite struct StartRequestTests {
    @Test func completeQueryGivesAStart() throws {
        let start = try StartRequest.fromQuery([
            "device_id": "pixel", "provider": "device", "sample_rate": "48000", "encoding": "pcm_s16le",
            "conversation_id": "c-1", "language": "de", "options": #"{"b":2,"a":1}"#,
            "audio_offset_seconds": "30.5", "token": "ignored",
        ])
        #expect(
            start
                == StartRequest(
                    conversationID: "c-1", deviceID: "pixel", provider: "device", sampleRate: 48_000,
                    encoding: .pcmS16LE, language: "de", optionsJSON: #"{"a":1,"b":2}"#, audioOffsetSeconds: 30.5))
    }

    @Test func incompleteQueryIsMissingAField() {
        #expect(throws: ProtocolError.missing("encoding", in: "query")) {
            try StartRequest.fromQuery(["device_id": "d", "provider": "none", "sample_rate": "16000"])
        }
    }

    @Test(arguments: [
        (["sample_rate": "abc"], ProtocolErrorCode.invalidField),
        (["sample_rate": "nan"], .invalidField),
        (["sample_rate": "inf"], .invalidField),
        (["sample_rate": "0x3E80"], .invalidField),
        (["sample_rate": "4000"], .unsupportedSampleRate),
        (["encoding": "mp3"], .unsupportedEncoding),
        (["options": "not json"], .invalidField),
        (["options": "[1,2]"], .invalidField),
        (["audio_offset_seconds": "-3"], .invalidField),
        (["conversation_id": "has/slash"], .invalidConversationID),
    ])
    func badQueryValues(query: [String: String], expected: ProtocolErrorCode) {
        do {
            _ = try StartParameters.fromQuery(query)
            Issue.record("accepted \(query)")
        } catch {
            #expect(error.code == expected)
        }
    }

    @Test func emptyQueryValuesCountAsAbsent() throws {
        let parameters = try StartParameters.fromQuery(["language": "", "provider": "none"])
        #expect(parameters == StartParameters(provider: "none"))
        #expect(try StartParameters.fromQuery(["unrelated": "x"]).isEmpty)
    }

    @Test func messageFieldsOverrideQueryFields() throws {
        let query = try StartParameters.fromQuery([
            "device_id": "from-query", "provider": "none", "sample_rate": "16000", "options": #"{"q":1}"#,
        ])
        #expect(!query.isComplete)
        let decoder = ClientMessageDecoder()
        let envelope = try decoder.envelope(
            #"{"type":"start","provider":"device","encoding":"pcm_f32le","options":{"m":2}}"#)
        let message = try decoder.decode(envelope, startDefaults: query)
        #expect(
            message
                == .start(
                    StartRequest(
                        deviceID: "from-query", provider: "device", sampleRate: 16_000, encoding: .pcmF32LE,
                        optionsJSON: #"{"m":2}"#)))
    }

    /// `asr` from the message or the query: "device" (also when absent) or "server"; anything else is
    /// `invalid_field` naming the allowed values, which rejects the start.
    @Test func asrFromMessageAndQuery() throws {
        let decoder = ClientMessageDecoder()
        let base = #""type":"start","device_id":"d","provider":"none","sample_rate":16000,"encoding":"pcm_s16le""#
        #expect(try decoder.decode("{\(base)}") == .start(StartRequest(deviceID: "d", provider: "none", sampleRate: 16_000, encoding: .pcmS16LE)))
        guard case .start(let server) = try decoder.decode("{\(base),\"asr\":\"server\"}") else {
            Issue.record("not a start")
            return
        }
        #expect(server.asr == .server)
        let query = try StartRequest.fromQuery(["device_id": "d", "provider": "none", "sample_rate": "16000", "encoding": "pcm_s16le", "asr": "server"])
        #expect(query.asr == .server)
        #expect(try StartParameters.fromQuery(["asr": ""]).asr == nil)
        // The message's value overrides the query's.
        let defaults = try StartParameters.fromQuery(["asr": "server"])
        guard case .start(let overridden) = try decoder.decode(decoder.envelope("{\(base),\"asr\":\"device\"}"), startDefaults: defaults) else {
            Issue.record("not a start")
            return
        }
        #expect(overridden.asr == .device)
        for bad in [#""asr":"cloud""#, #""asr":1"#, #""asr":"""#] {
            do {
                _ = try decoder.decode("{\(base),\(bad)}")
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.code == .invalidField)
                #expect(error.message.contains("asr"))
            }
        }
        #expect(throws: ProtocolError.self) { try StartParameters.fromQuery(["asr": "Server"]) }
    }

    /// `shadow_providers` from the message (an array) or the query (comma-separated): distinct ids,
    /// at most `maxShadowProviders`, never the session's own provider, known when the decoder knows
    /// the providers; an empty list means none.
    @Test func shadowProvidersFromMessageAndQuery() throws {
        let config = SessionConfig(knownProviders: ["speakerkit", "energy", "sherpa-onnx", "falcon"])
        let decoder = ClientMessageDecoder(config: config)
        let base = #""type":"start","device_id":"d","provider":"speakerkit","sample_rate":16000,"encoding":"pcm_s16le""#
        guard case .start(let plain) = try decoder.decode("{\(base)}"),
              case .start(let two) = try decoder.decode("{\(base),\"shadow_providers\":[\"energy\",\"sherpa-onnx\"]}"),
              case .start(let none) = try decoder.decode("{\(base),\"shadow_providers\":[]}") else {
            Issue.record("not a start")
            return
        }
        #expect(plain.shadowProviders.isEmpty && none.shadowProviders.isEmpty)
        #expect(two.shadowProviders == ["energy", "sherpa-onnx"])
        let query = try StartRequest.fromQuery(
            ["device_id": "d", "provider": "speakerkit", "sample_rate": "16000", "encoding": "pcm_s16le", "shadow_providers": "energy, falcon"],
            config: config)
        #expect(query.shadowProviders == ["energy", "falcon"])
        let refusals: [(String, ProtocolErrorCode, String)] = [
            (#""shadow_providers":"energy""#, .invalidField, "array"),
            (#""shadow_providers":["energy","energy"]"#, .invalidField, "twice"),
            (#""shadow_providers":["energy",""]"#, .invalidField, "element 1"),
            (#""shadow_providers":["energy",3]"#, .invalidField, "element 1"),
            (#""shadow_providers":["energy","sherpa-onnx","falcon"]"#, .invalidField, "at most 2"),
            (#""shadow_providers":["speakerkit"]"#, .invalidField, "own provider"),
            (#""shadow_providers":["pyannote"]"#, .unknownProvider, "pyannote"),
        ]
        // Options per shadow: objects, for shadows the start names.
        guard case .start(let configured) = try decoder.decode(
            "{\(base),\"shadow_providers\":[\"energy\"],\"shadow_options\":{\"energy\":{\"b\":1,\"a\":[2]}}}") else {
            Issue.record("not a start")
            return
        }
        #expect(configured.shadowOptionsJSON == ["energy": #"{"a":[2],"b":1}"#])
        let optionRefusals: [(String, String)] = [
            (#""shadow_providers":["energy"],"shadow_options":{"falcon":{}}"#, "not in shadow_providers"),
            (#""shadow_providers":["energy"],"shadow_options":{"energy":3}"#, "must be an object"),
            (#""shadow_options":[]"#, "provider id → options object"),
        ]
        for (field, words) in optionRefusals {
            do {
                _ = try decoder.decode("{\(base),\(field)}")
                Issue.record("accepted \(field)")
            } catch {
                #expect(error.code == .invalidField, "\(field)")
                #expect(error.message.contains(words), "\(field): \(error.message)")
            }
        }
        for (field, code, words) in refusals {
            do {
                _ = try decoder.decode("{\(base),\(field)}")
                Issue.record("accepted \(field)")
            } catch {
                #expect(error.code == code, "\(field)")
                #expect(error.message.contains(words), "\(field): \(error.message)")
            }
        }
    }

    @Test func conversationIDAlphabet() {
        #expect(StartParameters.isValidConversationID("A-z_0.9:x"))
        #expect(StartParameters.isValidConversationID(String(repeating: "a", count: 128)))
        #expect(!StartParameters.isValidConversationID(String(repeating: "a", count: 129)))
        #expect(!StartParameters.isValidConversationID(""))
        #expect(!StartParameters.isValidConversationID("é"))
        #expect(!StartParameters.isValidConversationID("a b"))
        #expect(!StartParameters.isValidConversationID("a/b"))
    }
}
