import Testing
@testable import SessionProtocol

/// Recognising Deepgram's upgrades and turning their query into a session's start.
struct DeepgramStartTests {
    static let config = SessionConfig(knownProviders: ["none", "speakerkit", "sherpa-onnx"], defaultProvider: "speakerkit")
    static let sdkQuery = ["model": "nova-3", "encoding": "linear16", "sample_rate": "16000", "channels": "1",
                           "diarize": "true", "interim_results": "true", "utterance_end_ms": "1000"]

    @Test func deepgramIsToldApartByItsOwnParametersOrItsTokenScheme() {
        #expect(DeepgramDialect.isDeepgram(query: Self.sdkQuery, headers: [:]))
        #expect(DeepgramDialect.isDeepgram(query: [:], headers: ["authorization": "Token abc"]))
        #expect(DeepgramDialect.isDeepgram(query: [:], headers: ["authorization": "  token abc"]))
        // SpeakerSync's own query start and credential.
        let own = ["device_id": "phone", "provider": "speakerkit", "sample_rate": "16000", "encoding": "pcm_s16le"]
        #expect(!DeepgramDialect.isDeepgram(query: own, headers: ["authorization": "Bearer abc"]))
        #expect(!DeepgramDialect.isDeepgram(query: [:], headers: [:]))
    }

    @Test func theSDKsQueryBecomesAServerRecognisedSessionOnTheDefaultProvider() throws {
        let start = try DeepgramStart(query: Self.sdkQuery, config: Self.config)
        #expect(start.query == ["encoding": "pcm_s16le", "sample_rate": "16000", "asr": "server", "provider": "speakerkit"])
        #expect(start.options == DeepgramOptions(diarize: true, interimResults: true, utteranceEndMilliseconds: 1000, model: "nova-3"))
        // And SpeakerSync's own start reads it, complete once the device is known.
        var parameters = try StartParameters.fromQuery(start.query, config: Self.config)
        parameters.deviceID = "phone"
        let request = try StartRequest(completing: parameters, config: Self.config)
        #expect(request.asr == .server && request.encoding == .pcmS16LE && request.provider == "speakerkit")
    }

    @Test func modelOrProviderChooseTheProviderAndNoDiarizationRunsNone() throws {
        var query = Self.sdkQuery
        query["model"] = "sherpa-onnx"
        #expect(try DeepgramStart(query: query, config: Self.config).query["provider"] == "sherpa-onnx")
        query["provider"] = "none"
        #expect(try DeepgramStart(query: query, config: Self.config).query["provider"] == "none")
        query = Self.sdkQuery
        query["diarize"] = nil
        let plain = try DeepgramStart(query: query, config: Self.config)
        #expect(plain.query["provider"] == "none")
        #expect(!plain.options.diarize)
        query["diarize_model"] = "latest"
        #expect(try DeepgramStart(query: query, config: Self.config).query["provider"] == "speakerkit")
    }

    @Test func speakerSyncFieldsPassThrough() throws {
        var query = Self.sdkQuery
        query["language"] = "en-US"
        query["conversation_id"] = "c-1"
        query["device_id"] = "phone"
        query["store_audio"] = "true"
        let start = try DeepgramStart(query: query, config: Self.config)
        #expect(start.query["language"] == "en-US")
        #expect(start.query["conversation_id"] == "c-1")
        #expect(start.query["device_id"] == "phone")
        #expect(start.query["store_audio"] == "true")
    }

    @Test(arguments: [
        (["encoding": nil], "encoding_required"),
        (["encoding": "opus"], "unsupported_encoding"),
        (["sample_rate": nil], "sample_rate_required"),
        (["sample_rate": "fast"], "sample_rate_required"),
        (["channels": "2"], "unsupported_channels"),
        (["multichannel": "true"], "unsupported_channels"),
        (["diarize": "maybe"], "invalid_parameter"),
        (["utterance_end_ms": "-5"], "invalid_parameter"),
    ] as [([String: String?], String)])
    func badQueriesAreRefusedWithAStableCode(change: [String: String?], code: String) {
        var query = Self.sdkQuery
        for (key, value) in change { query[key] = value }
        #expect(throws: DeepgramStart.Refusal.self) { try DeepgramStart(query: query, config: Self.config) }
        do {
            _ = try DeepgramStart(query: query, config: Self.config)
        } catch {
            #expect(error.code == code)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func controlMessagesMapOntoTheSessionsOwn() {
        #expect(DeepgramControl(text: #"{"type":"KeepAlive"}"#) == .keepAlive)
        #expect(DeepgramControl(text: #"{"type":"Finalize"}"#) == .finalize)
        #expect(DeepgramControl(text: #"{"type":"CloseStream"}"#) == .closeStream)
        #expect(DeepgramControl.closeStream.sessionText == #"{"type":"finalize"}"#)
        #expect(DeepgramControl.keepAlive.sessionText == #"{"type":"keepalive"}"#)
        guard case .refused(let code, _) = DeepgramControl(text: #"{"type":"Configure"}"#) else {
            Issue.record("Configure is not taken")
            return
        }
        #expect(code == "unknown_type")
        guard case .refused(let malformed, _) = DeepgramControl(text: "not json") else {
            Issue.record("text that is not JSON is refused")
            return
        }
        #expect(malformed == "malformed_json")
        #expect(DeepgramControl(text: "not json").sessionText == nil)
    }
}
