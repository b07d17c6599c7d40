/// Deepgram's live API (`wss://api.deepgram.com/v1/listen`) as its clients speak it, mapped onto a
/// SpeakerSync session, so an app or SDK written for Deepgram streams here unchanged
/// (docs/deepgram.md says what is the same, what differs and what is ignored).
///
/// Both protocols live on `/v1/listen`: Deepgram's SDKs append that path to the base URL they are
/// given, so a separate prefix would need every client reconfigured. The Deepgram form is recognised
/// by what only Deepgram clients send (`isDeepgram`).
public enum DeepgramDialect {
    /// Query parameters of Deepgram's live API that SpeakerSync's own start never uses. One of them on
    /// an upgrade marks the Deepgram form (every Deepgram SDK sends `model`, which it requires).
    public static let markerParameters: Set<String> = [
        "model", "diarize", "diarize_model", "interim_results", "punctuate", "smart_format", "channels",
        "multichannel", "endpointing", "utterance_end_ms", "vad_events", "keyterm", "keywords", "numerals",
        "profanity_filter", "redact", "replace", "search", "tag", "filler_words", "dictation",
        "detect_entities", "mip_opt_out", "version", "callback", "callback_method", "extra", "language_hint",
    ]

    /// True when an upgrade is Deepgram's: a Deepgram-only query parameter, or the credential in
    /// Deepgram's `Authorization: Token <key>` scheme (`headers` with lower-case names).
    public static func isDeepgram(query: [String: String], headers: [String: String]) -> Bool {
        if query.keys.contains(where: markerParameters.contains) { return true }
        guard let authorization = headers["authorization"] else { return false }
        let trimmed = authorization.drop { $0 == " " || $0 == "\t" }
        return trimmed.lowercased().hasPrefix("token ")
    }

    /// The device a Deepgram client streams as when its credential is the admin key (a device token
    /// names its own device) and it passes no `device_id` of its own.
    public static let defaultDeviceID = "deepgram"

    /// Deepgram encodings SpeakerSync decodes, with the session encoding each becomes.
    public static let encodings: [String: AudioEncoding] = ["linear16": .pcmS16LE]
}

/// What a Deepgram client asked for that shapes the answers rather than the session.
public struct DeepgramOptions: Hashable, Sendable {
    /// `diarize=true` (or a `diarize_model`): words carry `speaker`. Off, the session runs provider
    /// `none` (unless `provider` names one) and words carry no speaker, as Deepgram's do.
    public var diarize: Bool
    /// `interim_results=true`: words not yet final (waiting for their speaker) go out with `is_final: false`.
    public var interimResults: Bool
    /// `utterance_end_ms`: an `UtteranceEnd` follows each result that ends what was heard.
    public var utteranceEndMilliseconds: Int?
    /// `model` as the client gave it, echoed in `model_info`.
    public var model: String

    public init(diarize: Bool = true, interimResults: Bool = false, utteranceEndMilliseconds: Int? = nil,
                model: String = "speakersync") {
        self.diarize = diarize
        self.interimResults = interimResults
        self.utteranceEndMilliseconds = utteranceEndMilliseconds
        self.model = model
    }
}

/// A Deepgram upgrade turned into SpeakerSync's start query: the session's query parameters
/// (`StartParameters.fromQuery` reads them) and the answer-shaping options.
public struct DeepgramStart: Hashable, Sendable {
    public var query: [String: String]
    public var options: DeepgramOptions

    /// Why an upgrade cannot become a session: answered as HTTP 400 at the handshake, as Deepgram does.
    public struct Refusal: Error, Hashable, Sendable {
        /// Stable, snake_case (docs/deepgram.md).
        public var code: String
        public var message: String
    }

    /// `config`: its `knownProviders` are what a `model` may name to select one (Deepgram's own model
    /// names, such as `nova-3`, select `defaultProvider`). The query names the provider always, so the
    /// session starts from the query alone, as Deepgram's does: there is no start message to wait for.
    public init(query: [String: String], config: SessionConfig) throws(Refusal) {
        func flag(_ name: String) throws(Refusal) -> Bool? {
            guard let value = query[name]?.lowercased(), !value.isEmpty else { return nil }
            switch value {
            case "true", "1": return true
            case "false", "0": return false
            default: throw Refusal(code: "invalid_parameter", message: "\(name) must be true or false, got \"\(value)\"")
            }
        }
        guard let encodingName = query["encoding"], !encodingName.isEmpty else {
            throw Refusal(code: "encoding_required", message: "encoding is required: SpeakerSync takes raw audio, "
                + "encoding=linear16 with sample_rate (containerised audio such as WAV or WebM is not detected)")
        }
        guard let encoding = DeepgramDialect.encodings[encodingName.lowercased()] else {
            throw Refusal(code: "unsupported_encoding", message: "encoding \"\(encodingName)\" is not supported; use "
                + DeepgramDialect.encodings.keys.sorted().joined(separator: ", "))
        }
        guard let rate = query["sample_rate"], let sampleRate = Int(rate), sampleRate > 0 else {
            throw Refusal(code: "sample_rate_required", message: "sample_rate is required with encoding \(encodingName), in Hz")
        }
        if let channels = query["channels"], !channels.isEmpty, channels != "1" {
            throw Refusal(code: "unsupported_channels", message: "channels must be 1 (one mixed channel); got \(channels)")
        }
        if try flag("multichannel") == true {
            throw Refusal(code: "unsupported_channels", message: "multichannel is not supported; send one mixed channel")
        }
        var utteranceEnd: Int?
        if let text = query["utterance_end_ms"], !text.isEmpty {
            guard let milliseconds = Int(text), milliseconds > 0 else {
                throw Refusal(code: "invalid_parameter", message: "utterance_end_ms must be a positive integer, got \"\(text)\"")
            }
            utteranceEnd = milliseconds
        }
        let model = query["model"].flatMap { $0.isEmpty ? nil : $0 } ?? "speakersync"
        let diarize = try flag("diarize") == true || !(query["diarize_model"] ?? "").isEmpty
        var session: [String: String] = [
            "encoding": encoding.rawValue, "sample_rate": String(sampleRate), "asr": "server",
        ]
        if let provider = query["provider"], !provider.isEmpty {
            session["provider"] = provider
        } else if !diarize {
            session["provider"] = "none"
        } else if config.knownProviders?.contains(model) == true {
            session["provider"] = model
        } else if let provider = config.defaultProvider {
            session["provider"] = provider
        }
        // Passed through under SpeakerSync's own names (docs/deepgram.md).
        for name in ["language", "device_id", "conversation_id", "store_audio", "options"] {
            if let value = query[name], !value.isEmpty { session[name] = value }
        }
        self.query = session
        options = DeepgramOptions(
            diarize: diarize, interimResults: try flag("interim_results") ?? false,
            utteranceEndMilliseconds: utteranceEnd, model: model)
    }
}
