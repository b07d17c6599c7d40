/// The start fields as given by one source (the upgrade URL's query or a `start` message), each
/// already checked on its own but possibly incomplete.
///
/// A session's start is the query's parameters overridden field by field by the `start` message's
/// (see `StartRequest.merging`). Keeping the two apart lets a device put the static part of its
/// configuration in the URL and the rest in the message.
public struct StartParameters: Hashable, Sendable {
    public var conversationID: String?
    public var deviceID: String?
    public var provider: String?
    public var sampleRate: Int?
    public var encoding: AudioEncoding?
    public var language: String?
    /// The `options` object as canonical JSON text (sorted keys), handed to the provider plugin as is.
    public var optionsJSON: String?
    public var audioOffsetSeconds: Double?
    public var asr: ASRMode?
    /// Providers to run beside `provider` on the same audio, for comparison (their labels are stored,
    /// never sent). An empty list is "none", as absent is.
    public var shadowProviders: [String]?
    /// Options per shadow provider (provider id → canonical JSON object text); each key must be one
    /// of `shadowProviders` (checked when the start is complete).
    public var shadowOptionsJSON: [String: String]?
    /// Keep the session's audio (lossless, in PostgreSQL) for playback and re-diarization.
    public var storeAudio: Bool?

    public init(
        conversationID: String? = nil, deviceID: String? = nil, provider: String? = nil,
        sampleRate: Int? = nil, encoding: AudioEncoding? = nil, language: String? = nil,
        optionsJSON: String? = nil, audioOffsetSeconds: Double? = nil, asr: ASRMode? = nil,
        shadowProviders: [String]? = nil, shadowOptionsJSON: [String: String]? = nil, storeAudio: Bool? = nil
    ) {
        self.storeAudio = storeAudio
        self.shadowProviders = shadowProviders
        self.shadowOptionsJSON = shadowOptionsJSON
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

    /// True when no field is set (no start information in the query).
    public var isEmpty: Bool { self == StartParameters() }

    /// True when every required field (device_id, provider, sample_rate, encoding) is set.
    public var isComplete: Bool {
        deviceID != nil && provider != nil && sampleRate != nil && encoding != nil
    }

    /// These parameters with every field that `other` sets replaced by `other`'s value.
    /// `options` is replaced as a whole, never merged key by key.
    public func overriding(with other: StartParameters) -> StartParameters {
        StartParameters(
            conversationID: other.conversationID ?? conversationID,
            deviceID: other.deviceID ?? deviceID,
            provider: other.provider ?? provider,
            sampleRate: other.sampleRate ?? sampleRate,
            encoding: other.encoding ?? encoding,
            language: other.language ?? language,
            optionsJSON: other.optionsJSON ?? optionsJSON,
            audioOffsetSeconds: other.audioOffsetSeconds ?? audioOffsetSeconds,
            asr: other.asr ?? asr,
            shadowProviders: other.shadowProviders ?? shadowProviders,
            shadowOptionsJSON: other.shadowOptionsJSON ?? shadowOptionsJSON,
            storeAudio: other.storeAudio ?? storeAudio
        )
    }

    // MARK: reading

    /// Reads the start fields of the upgrade URL's query (already percent-decoded by the transport).
    ///
    /// Recognised keys are the `start` message's field names; `options` is JSON text of an object.
    /// Empty values count as absent (`?language=`); other keys (e.g. an auth token) are ignored.
    /// The query parameters a start reads (others, such as a credential, are ignored).
    public static let queryFieldNames: Set<String> = [
        "sample_rate", "audio_offset_seconds", "options", "shadow_options", "conversation_id", "device_id",
        "provider", "encoding", "language", "asr", "store_audio", "shadow_providers",
    ]

    public static func fromQuery(
        _ query: [String: String], config: SessionConfig = .default
    ) throws(ProtocolError) -> StartParameters {
        var members: [String: JSONValue] = [:]
        for (key, value) in query where !value.isEmpty {
            switch key {
            case "sample_rate", "audio_offset_seconds":
                // Swift's Double() would accept "nan", "inf" and "0x10"; insist on a JSON number.
                guard case .number(let number)? = try? JSONParser(maxDepth: 1).parse(value) else {
                    throw .invalid(key, in: "query", "must be a number, got \"\(value)\"")
                }
                members[key] = .number(number)
            case "options", "shadow_options":
                do {
                    members[key] = try JSONParser().parse(value)
                } catch where error.kind == .invalidText {
                    let field = error.path.isEmpty ? key : "\(key).\(error.path)"
                    throw ProtocolError(.invalidText, "query: field \"\(field)\" \(error.reason); text that PostgreSQL cannot store is refused")
                } catch {
                    throw .invalid(key, in: "query", "must be JSON text of an object")
                }
            case "conversation_id", "device_id", "provider", "encoding", "language", "asr":
                members[key] = .string(value)
            case "store_audio":
                guard value == "true" || value == "false" else { throw .invalid(key, in: "query", "must be true or false, got \"\(value)\"") }
                members[key] = .bool(value == "true")
            case "shadow_providers":
                // A comma-separated list in a URL: ?shadow_providers=energy,sherpa-onnx
                members[key] = .array(value.split(separator: ",", omittingEmptySubsequences: false)
                    .map { .string(String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())) })
            default:
                continue
            }
        }
        return try read(FieldReader(object: members, context: "query", config: config))
    }

    /// Reads the start fields of a `start` message object.
    static func read(_ reader: FieldReader) throws(ProtocolError) -> StartParameters {
        var parameters = StartParameters()
        if let conversationID = try reader.optionalString("conversation_id", allowEmpty: true) {
            guard Self.isValidConversationID(conversationID) else {
                throw ProtocolError(
                    .invalidConversationID,
                    "\(reader.context): conversation_id must be 1-128 characters of A-Z a-z 0-9 . _ : -")
            }
            parameters.conversationID = conversationID
        }
        parameters.deviceID = try reader.optionalString("device_id")
        parameters.provider = try reader.optionalString("provider")
        if let rate = try reader.optionalNumber("sample_rate") {
            guard rate == rate.rounded(), rate >= 1, rate <= 1e9 else {
                throw .invalid("sample_rate", in: reader.context, "must be a whole number of Hz, got \(rate)")
            }
            let hertz = Int(rate)
            guard reader.config.sampleRateRange.contains(hertz) else {
                throw ProtocolError(
                    .unsupportedSampleRate,
                    "sample_rate \(hertz) Hz is not supported; use \(reader.config.sampleRateRange.lowerBound)"
                        + "-\(reader.config.sampleRateRange.upperBound) Hz")
            }
            parameters.sampleRate = hertz
        }
        if let name = try reader.optionalString("encoding", allowEmpty: true) {
            guard let encoding = AudioEncoding(rawValue: name) else {
                throw ProtocolError(
                    .unsupportedEncoding,
                    "encoding \"\(name)\" is not supported; use "
                        + AudioEncoding.allCases.map(\.rawValue).joined(separator: " or "))
            }
            parameters.encoding = encoding
        }
        parameters.language = try reader.optionalString("language")
        if let options = reader.value("options") {
            guard case .object = options else {
                throw .invalid("options", in: reader.context, "must be an object, got \(options.typeName)")
            }
            var writer = JSONTextWriter()
            writer.value(options)
            parameters.optionsJSON = writer.text
        }
        if let offset = try reader.optionalNumber("audio_offset_seconds") {
            guard offset >= 0 else {
                throw .invalid("audio_offset_seconds", in: reader.context, "must not be negative")
            }
            parameters.audioOffsetSeconds = offset
        }
        if let name = try reader.optionalString("asr") {
            guard let mode = ASRMode(rawValue: name) else {
                throw .invalid("asr", in: reader.context,
                               "must be " + ASRMode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ") + ", got \"\(name)\"")
            }
            parameters.asr = mode
        }
        if let shadows = reader.value("shadow_providers") {
            parameters.shadowProviders = try readShadowProviders(shadows, context: reader.context, config: reader.config)
        }
        if reader.value("store_audio") != nil { parameters.storeAudio = try reader.bool("store_audio") }
        if let value = reader.value("shadow_options") {
            guard case .object(let members) = value else {
                throw .invalid("shadow_options", in: reader.context, "must be an object of provider id → options object, got \(value.typeName)")
            }
            var options: [String: String] = [:]
            for (id, object) in members {
                guard case .object = object else {
                    throw .invalid("shadow_options", in: reader.context, "options of \"\(id)\" must be an object, got \(object.typeName)")
                }
                var writer = JSONTextWriter()
                writer.value(object)
                options[id] = writer.text
            }
            parameters.shadowOptionsJSON = options
        }
        return parameters
    }

    /// `shadow_providers`: an array of distinct, non-empty provider ids, at most `maxShadowProviders`.
    /// Whether each exists, is available and differs from the primary is the server's check.
    static func readShadowProviders(_ value: JSONValue, context: String, config: SessionConfig) throws(ProtocolError) -> [String] {
        guard case .array(let elements) = value else {
            throw .invalid("shadow_providers", in: context, "must be an array of provider ids, got \(value.typeName)")
        }
        var ids: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let id) = element, !id.isEmpty, id.unicodeScalars.count <= config.maxStringLength else {
                throw .invalid("shadow_providers", in: context, "element \(index) must be a non-empty provider id")
            }
            guard !ids.contains(id) else {
                throw .invalid("shadow_providers", in: context, "names \"\(id)\" twice")
            }
            ids.append(id)
        }
        guard ids.count <= config.maxShadowProviders else {
            throw .invalid("shadow_providers", in: context,
                           "names \(ids.count) providers; at most \(config.maxShadowProviders) run beside the primary")
        }
        return ids
    }

    /// 1-128 characters of `[A-Za-z0-9._:-]`: safe in URLs, file names and log lines without quoting.
    public static func isValidConversationID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: ":"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}
