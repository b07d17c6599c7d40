/// A complete, validated session start: what the server needs to open or resume a conversation.
public struct StartRequest: Hashable, Sendable {
    /// The conversation to open or resume; nil lets the server create one with a new id.
    public var conversationID: String?
    public var deviceID: String
    /// Diarization provider id (`none`, `device`, or a plugin's id).
    public var provider: String
    /// Sample rate of the client's audio in Hz; the server resamples for the provider.
    public var sampleRate: Int
    public var encoding: AudioEncoding
    /// The speech's language as the client names it (e.g. BCP 47 "en-US"); passed to the provider.
    public var language: String?
    /// Provider options as canonical JSON object text; "{}" when none were given.
    public var optionsJSON: String
    /// Where this connection's first audio sample lies on the conversation timeline, in seconds.
    /// nil: 0 for a new conversation, the stored audio end for a resumed one.
    public var audioOffsetSeconds: Double?
    /// Whether the client named `provider`. When it did not, `provider` is the server default and the
    /// server may replace it with the device's own choice (its console setting) before beginning.
    public var providerNamed: Bool = true
    /// Who recognises the words: the device (`words` messages) or the server (from the audio).
    public var asr: ASRMode
    /// Providers run beside `provider` on the same audio; their labels are stored, not sent.
    public var shadowProviders: [String] = []
    /// Options per shadow provider (canonical JSON object text); a shadow without an entry gets "{}".
    public var shadowOptionsJSON: [String: String] = [:]
    /// Keep the session's audio (`store_audio`).
    public var storeAudio = false

    public init(
        conversationID: String? = nil, deviceID: String, provider: String, sampleRate: Int,
        encoding: AudioEncoding, language: String? = nil, optionsJSON: String = "{}",
        audioOffsetSeconds: Double? = nil, asr: ASRMode = .device
    ) {
        self.conversationID = conversationID
        self.deviceID = deviceID
        self.provider = provider
        self.sampleRate = sampleRate
        self.encoding = encoding
        self.language = language
        self.optionsJSON = optionsJSON
        self.audioOffsetSeconds = audioOffsetSeconds
        self.asr = asr
    }

    /// The start given entirely by the upgrade URL's query; `missing_field` when it is incomplete.
    public static func fromQuery(
        _ query: [String: String], config: SessionConfig = .default
    ) throws(ProtocolError) -> StartRequest {
        try StartRequest(
            completing: StartParameters.fromQuery(query, config: config), context: "query", config: config)
    }

    /// Builds the start from `parameters`, requiring every mandatory field and a known provider.
    public init(
        completing parameters: StartParameters, context: String = "start", config: SessionConfig = .default
    ) throws(ProtocolError) {
        guard let deviceID = parameters.deviceID else { throw .missing("device_id", in: context) }
        guard let provider = parameters.provider ?? config.defaultProvider else { throw .missing("provider", in: context) }
        guard let sampleRate = parameters.sampleRate else { throw .missing("sample_rate", in: context) }
        guard let encoding = parameters.encoding else { throw .missing("encoding", in: context) }
        if let rates = encoding.allowedSampleRates, !rates.contains(sampleRate) {
            throw ProtocolError(
                .unsupportedSampleRate,
                "sample_rate \(sampleRate) Hz is not supported with encoding \(encoding.rawValue); use one of "
                    + rates.sorted().map(String.init).joined(separator: ", "))
        }
        if let known = config.knownProviders, !known.contains(provider) {
            throw ProtocolError(
                .unknownProvider,
                "provider \"\(provider)\" is not available; available: \(known.sorted().joined(separator: ", "))")
        }
        for shadow in parameters.shadowProviders ?? [] {
            if shadow == provider {
                throw .invalid("shadow_providers", in: context, "names the session's own provider \"\(provider)\"")
            }
            if let known = config.knownProviders, !known.contains(shadow) {
                throw ProtocolError(
                    .unknownProvider,
                    "shadow provider \"\(shadow)\" is not available; available: \(known.sorted().joined(separator: ", "))")
            }
        }
        self.init(
            conversationID: parameters.conversationID, deviceID: deviceID, provider: provider,
            sampleRate: sampleRate, encoding: encoding, language: parameters.language,
            optionsJSON: parameters.optionsJSON ?? "{}", audioOffsetSeconds: parameters.audioOffsetSeconds,
            asr: parameters.asr ?? .device)
        providerNamed = parameters.provider != nil
        shadowProviders = parameters.shadowProviders ?? []
        shadowOptionsJSON = parameters.shadowOptionsJSON ?? [:]
        storeAudio = parameters.storeAudio ?? false
        for id in shadowOptionsJSON.keys.sorted() where !shadowProviders.contains(id) {
            throw .invalid("shadow_options", in: context, "has options for \"\(id)\", which is not in shadow_providers")
        }
    }
}
