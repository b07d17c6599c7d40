/// Decodes and validates client text messages.
///
/// Decoding is two-step so the state machine can reject a message by its type before looking at its
/// fields (a second `start` is `already_started` even when its fields are incomplete):
/// `envelope(_:)` parses the JSON and the type, `decode(_:)` validates the fields. A message is
/// accepted or rejected as a whole: one bad word rejects the whole `words` message.
public struct ClientMessageDecoder: Sendable {
    public var config: SessionConfig

    public init(config: SessionConfig = .default) {
        self.config = config
    }

    /// A parsed message whose type is known but whose fields are not yet validated.
    public struct Envelope: Sendable {
        public var type: ClientMessageType
        var members: [String: JSONValue]
        /// The message holds text that cannot be stored (`invalid_text`): `decode` refuses it. Kept
        /// apart so the refusal knows the message's type (a refused `start` closes the session).
        var invalidText: ProtocolError?
    }

    /// Parses `text` as a JSON object with a known `type`.
    public func envelope(_ text: String) throws(ProtocolError) -> Envelope {
        let value: JSONValue
        var invalidText: ProtocolError?
        do {
            value = try JSONParser().parse(text)
        } catch where error.kind == .invalidText {
            // Read it again with the offending characters replaced, only to learn its type.
            guard let lenient = try? JSONParser(invalidText: .replace).parse(text) else {
                throw ProtocolError(.malformedJSON, "invalid JSON at byte \(error.byteOffset): \(error.reason)")
            }
            var typeName = "message"
            if case .object(let members) = lenient, case .string(let name)? = members["type"] {
                typeName = name
                // A words message is named by its result, so a device knows which result was refused.
                if case .string(let resultID)? = members["result_id"] { typeName += " \(resultID)" }
            }
            let field = error.path.isEmpty ? "a key" : "field \"\(error.path)\""
            invalidText = ProtocolError(.invalidText, "\(typeName): \(field) \(error.reason); text that PostgreSQL cannot store is refused")
            value = lenient
        } catch {
            throw ProtocolError(.malformedJSON, "invalid JSON at byte \(error.byteOffset): \(error.reason)")
        }
        guard case .object(let members) = value else {
            throw ProtocolError(.malformedJSON, "a message must be a JSON object, got \(value.typeName)")
        }
        switch members["type"] {
        case nil, .null?:
            if let invalidText { throw invalidText }
            throw ProtocolError(.missingField, "message: missing field \"type\"")
        case .string(let name)?:
            guard let type = ClientMessageType(rawValue: name) else {
                if let invalidText { throw invalidText }
                let known = ClientMessageType.allCases.map(\.rawValue).joined(separator: ", ")
                throw ProtocolError(.unknownType, "unknown message type \"\(name)\"; known: \(known)")
            }
            return Envelope(type: type, members: members, invalidText: invalidText)
        case let other?:
            if let invalidText { throw invalidText }
            throw ProtocolError(.invalidField, "message: field \"type\" must be a string, got \(other.typeName)")
        }
    }

    /// Validates the envelope's fields. A `start` is completed with `startDefaults` (the query's
    /// parameters), its own fields taking precedence.
    public func decode(
        _ envelope: Envelope, startDefaults: StartParameters = StartParameters()
    ) throws(ProtocolError) -> ClientMessage {
        if let invalidText = envelope.invalidText { throw invalidText }
        let reader = FieldReader(object: envelope.members, context: envelope.type.rawValue, config: config)
        switch envelope.type {
        case .start:
            let parameters = try StartParameters.read(reader)
            return .start(
                try StartRequest(
                    completing: startDefaults.overriding(with: parameters), context: "start", config: config))
        case .words:
            let resultID = try reader.string("result_id")
            let isFinal = try reader.bool("final")
            let words = try reader.objects("words", limit: config.maxWordsPerMessage) {
                (word: FieldReader) throws(ProtocolError) -> WireInputWord in
                let span = try word.timeSpan()
                return WireInputWord(
                    text: try word.string("text", allowEmpty: true), startSeconds: span.startSeconds,
                    endSeconds: span.endSeconds, confidence: try word.optionalConfidence("confidence"))
            }
            return .words(WordsMessage(resultID: resultID, isFinal: isFinal, words: words))
        case .segments:
            let segments = try reader.objects("segments", limit: config.maxWordsPerMessage) {
                (segment: FieldReader) throws(ProtocolError) -> DeviceSegment in
                let span = try segment.timeSpan()
                return DeviceSegment(
                    speaker: try segment.string("speaker"), startSeconds: span.startSeconds,
                    endSeconds: span.endSeconds, confidence: try segment.optionalConfidence("confidence"))
            }
            return .segments(segments)
        case .renameSpeaker:
            let speaker = try reader.string("speaker")
            // An empty name clears the display name: the speaker is shown by its label again.
            let name = try reader.string("name", allowEmpty: true)
            return .renameSpeaker(speaker: speaker, name: name)
        case .mergeSpeakers:
            let from = try reader.string("from")
            let into = try reader.string("into")
            guard from != into else {
                throw .invalid("into", in: reader.context, "must differ from \"from\"")
            }
            return .mergeSpeakers(from: from, into: into)
        case .finalize:
            return .finalize
        case .keepalive:
            return .keepalive
        }
    }

    /// Parses and validates in one step (no query defaults).
    public func decode(_ text: String) throws(ProtocolError) -> ClientMessage {
        try decode(envelope(text))
    }
}
