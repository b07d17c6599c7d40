/// Reads the server's messages back into `ServerMessage`: the device's side of `ServerMessageEncoder`,
/// for a device that lives inside the server (the console's test recordings) and for tests.
/// `decode(encoder.encode(message)) == message` for every message.
///
/// Strict like the client side (`JSONParser`): a field of the wrong type is an error, not a guess.
public struct ServerMessageDecoder: Sendable {
    public init() {}

    public func decode(_ text: String) throws(ProtocolError) -> ServerMessage {
        let value: JSONValue
        do {
            value = try JSONParser().parse(text)
        } catch {
            throw ProtocolError(.malformedJSON, "invalid JSON at byte \(error.byteOffset): \(error.reason)")
        }
        guard case .object(let members) = value else {
            throw ProtocolError(.malformedJSON, "a message must be a JSON object, got \(value.typeName)")
        }
        let message = Fields(members, context: "message")
        let type = try message.string("type")
        let fields = Fields(members, context: type)
        switch type {
        case "session":
            guard let encoding = AudioEncoding(rawValue: try fields.string("encoding")) else { throw fields.invalid("encoding") }
            guard let asr = ASRMode(rawValue: try fields.string("asr")) else { throw fields.invalid("asr") }
            return .session(SessionInfo(
                conversationID: try fields.string("conversation_id"), provider: try fields.string("provider"),
                sampleRate: try fields.integer("sample_rate"), encoding: encoding, asr: asr, resumed: try fields.bool("resumed"),
                audioOffsetSeconds: try fields.number("audio_offset_seconds"), serverVersion: try fields.string("server_version"),
                protocolVersion: try fields.integer("protocol_version"), providerSource: try fields.optionalString("provider_source")))
        case "transcript":
            guard let revision = UInt64(exactly: try fields.integer("revision")) else { throw fields.invalid("revision") }
            return .transcript(TranscriptUpdate(
                revision: revision,
                upserted: try fields.objects("upserted").map(Self.utterance),
                removed: try fields.strings("removed"), isFinal: try fields.bool("final")))
        case "speakers":
            return .speakers(try fields.objects("speakers").map { speaker throws(ProtocolError) in
                WireSpeaker(label: try speaker.string("label"), name: try speaker.string("name"),
                            mergedInto: try speaker.optionalString("merged_into"))
            })
        case "error":
            guard let code = ProtocolErrorCode(rawValue: try fields.string("code")) else { throw fields.invalid("code") }
            return .error(WireError(code: code, message: try fields.string("message"), fatal: try fields.bool("fatal")))
        case "stats":
            return .stats(SessionStats(
                audioSeconds: try fields.number("audio_seconds"), wordCount: try fields.integer("words"),
                unlabelledWordCount: try fields.integer("unlabelled_words"), speakerCount: try fields.integer("speakers"),
                firstLabelLatenciesSeconds: try fields.numbers("first_label_latency_seconds"),
                finalLabelLatenciesSeconds: try fields.numbers("final_label_latency_seconds"),
                chunkProcessingSeconds: try fields.numbers("chunk_processing_seconds"),
                realTimeFactor: try fields.optionalNumber("real_time_factor"),
                liveTurns: try fields.objects("live_turns").map(Self.turn), finalTurns: try fields.objects("final_turns").map(Self.turn)))
        default:
            throw ProtocolError(.unknownType, "unknown server message type \"\(type)\"")
        }
    }

    private static func utterance(_ fields: Fields) throws(ProtocolError) -> WireUtterance {
        WireUtterance(
            id: try fields.string("id"), speaker: try fields.optionalString("speaker"), name: try fields.optionalString("name"),
            startSeconds: try fields.number("start"), endSeconds: try fields.number("end"), text: try fields.string("text"),
            words: try fields.objects("words").map { word throws(ProtocolError) in
                WireWord(
                    text: try word.string("text"), startSeconds: try word.number("start"), endSeconds: try word.number("end"),
                    speaker: try word.optionalString("speaker"), speakerConfidence: try word.optionalNumber("speaker_confidence"),
                    confidence: try word.optionalNumber("confidence"), isFinal: try word.bool("final"), isStored: try word.bool("stored"))
            })
    }

    private static func turn(_ fields: Fields) throws(ProtocolError) -> WireTurn {
        WireTurn(speaker: try fields.string("speaker"), startSeconds: try fields.number("start"), endSeconds: try fields.number("end"))
    }

    /// One object's members, read by name with the type each must have; errors name the field.
    private struct Fields {
        let members: [String: JSONValue]
        let context: String

        init(_ members: [String: JSONValue], context: String) {
            self.members = members
            self.context = context
        }

        func invalid(_ name: String) -> ProtocolError {
            .invalid(name, in: context, "has an unexpected value")
        }

        private func present(_ name: String) throws(ProtocolError) -> JSONValue {
            guard let value = members[name] else { throw .missing(name, in: context) }
            return value
        }

        func string(_ name: String) throws(ProtocolError) -> String {
            guard case .string(let text) = try present(name) else { throw .invalid(name, in: context, "must be a string") }
            return text
        }

        /// Written as `null` when absent; a missing field reads as absent too.
        func optionalString(_ name: String) throws(ProtocolError) -> String? {
            switch members[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .invalid(name, in: context, "must be a string or null")
            }
        }

        func number(_ name: String) throws(ProtocolError) -> Double {
            guard case .number(let value) = try present(name) else { throw .invalid(name, in: context, "must be a number") }
            return value
        }

        func optionalNumber(_ name: String) throws(ProtocolError) -> Double? {
            switch members[name] {
            case nil, .null?: return nil
            case .number(let value)?: return value
            default: throw .invalid(name, in: context, "must be a number or null")
            }
        }

        func integer(_ name: String) throws(ProtocolError) -> Int {
            let value = try number(name)
            guard value == value.rounded(), abs(value) < 9_007_199_254_740_992 else { throw .invalid(name, in: context, "must be a whole number") }
            return Int(value)
        }

        func bool(_ name: String) throws(ProtocolError) -> Bool {
            guard case .bool(let flag) = try present(name) else { throw .invalid(name, in: context, "must be true or false") }
            return flag
        }

        private func array(_ name: String) throws(ProtocolError) -> [JSONValue] {
            guard case .array(let elements) = try present(name) else { throw .invalid(name, in: context, "must be an array") }
            return elements
        }

        func numbers(_ name: String) throws(ProtocolError) -> [Double] {
            try array(name).map { element throws(ProtocolError) -> Double in
                guard case .number(let value) = element else { throw .invalid(name, in: context, "must hold numbers only") }
                return value
            }
        }

        func strings(_ name: String) throws(ProtocolError) -> [String] {
            try array(name).map { element throws(ProtocolError) -> String in
                guard case .string(let text) = element else { throw .invalid(name, in: context, "must hold strings only") }
                return text
            }
        }

        func objects(_ name: String) throws(ProtocolError) -> [Fields] {
            try array(name).map { element throws(ProtocolError) -> Fields in
                guard case .object(let members) = element else { throw .invalid(name, in: context, "must hold objects only") }
                return Fields(members, context: "\(context).\(name)")
            }
        }
    }
}
