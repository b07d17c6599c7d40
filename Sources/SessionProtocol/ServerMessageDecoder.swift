/// Decodes the server's messages on the device side: the inverse of `ServerMessageEncoder` (the
/// round-trip tests hold them to each other), and the one place SpeakerSyncKit, and through it the CLI,
/// eval and the fault harness, reads them.
///
/// What a device must tolerate is tolerated: unknown fields are ignored, `null` reads as absent, any
/// string may be empty, the fields added to version 1 after its first servers (`asr`,
/// `provider_source`) take their defaults when absent, and an error code this version does not know
/// is kept (`WireError.unknownCode`). A field of the wrong JSON type, or a required one missing, makes the message
/// undecodable rather than silently a default. A type this device does not know is `unknown_type`:
/// the caller ignores it (a newer server may send more kinds of message).
public struct ServerMessageDecoder: Sendable {
    public init() {}

    public func decode(_ text: String) throws(ProtocolError) -> ServerMessage {
        let value: JSONValue
        do {
            // The device stores nothing, so text PostgreSQL could not store is no reason to refuse.
            value = try JSONParser(invalidText: .replace).parse(text)
        } catch {
            throw ProtocolError(.malformedJSON, "invalid JSON at byte \(error.byteOffset): \(error.reason)")
        }
        guard case .object(let members) = value else {
            throw ProtocolError(.malformedJSON, "a message must be a JSON object, got \(value.typeName)")
        }
        let type = try Self.reader(members, "message").string("type")
        let reader = Self.reader(members, type)
        switch type {
        case "session": return .session(try session(reader))
        case "transcript": return .transcript(try transcript(reader))
        case "speakers":
            return .speakers(try reader.objects("speakers", limit: .max) { (item: FieldReader) throws(ProtocolError) in
                WireSpeaker(label: try item.string("label", allowEmpty: true), name: try item.string("name", allowEmpty: true),
                            mergedInto: try item.optionalString("merged_into", allowEmpty: true))
            })
        case "error":
            let name = try reader.string("code", allowEmpty: true)
            var error = WireError(code: ProtocolErrorCode(rawValue: name) ?? .internalError,
                                  message: try reader.string("message", allowEmpty: true), fatal: try reader.bool("fatal"))
            // A newer server's code is kept as written: a device classifies codes it does not know by the close code.
            if ProtocolErrorCode(rawValue: name) == nil { error.unknownCode = name }
            return .error(error)
        case "stats": return .stats(try stats(reader))
        default: throw ProtocolError(.unknownType, "unknown server message type \"\(type)\"")
        }
    }

    private func session(_ reader: FieldReader) throws(ProtocolError) -> SessionInfo {
        let encodingName = try reader.string("encoding", allowEmpty: true)
        guard let encoding = AudioEncoding(rawValue: encodingName) else {
            throw .invalid("encoding", in: reader.context, "is not a known encoding: \"\(encodingName)\"")
        }
        var asr = ASRMode.device
        if let name = try reader.optionalString("asr", allowEmpty: true) {
            guard let mode = ASRMode(rawValue: name) else {
                throw .invalid("asr", in: reader.context, "is not a known ASR mode: \"\(name)\"")
            }
            asr = mode
        }
        return SessionInfo(
            conversationID: try reader.string("conversation_id", allowEmpty: true), provider: try reader.string("provider", allowEmpty: true),
            sampleRate: try Self.integer(reader, "sample_rate"), encoding: encoding, asr: asr,
            resumed: try reader.bool("resumed"), audioOffsetSeconds: try reader.number("audio_offset_seconds"),
            serverVersion: try reader.string("server_version", allowEmpty: true),
            protocolVersion: try Self.integer(reader, "protocol_version"),
            providerSource: try reader.optionalString("provider_source", allowEmpty: true))
    }

    private func transcript(_ reader: FieldReader) throws(ProtocolError) -> TranscriptUpdate {
        let upserted = try reader.objects("upserted", limit: .max) { (item: FieldReader) throws(ProtocolError) in
            WireUtterance(
                id: try item.string("id", allowEmpty: true), speaker: try item.optionalString("speaker", allowEmpty: true),
                name: try item.optionalString("name", allowEmpty: true), startSeconds: try item.number("start"),
                endSeconds: try item.number("end"), text: try item.string("text", allowEmpty: true),
                words: try item.objects("words", limit: .max) { (word: FieldReader) throws(ProtocolError) in
                    WireWord(
                        text: try word.string("text", allowEmpty: true), startSeconds: try word.number("start"),
                        endSeconds: try word.number("end"), speaker: try word.optionalString("speaker", allowEmpty: true),
                        speakerConfidence: try word.optionalNumber("speaker_confidence"),
                        confidence: try word.optionalNumber("confidence"), isFinal: try word.bool("final"),
                        isStored: try word.bool("stored"))
                })
        }
        return TranscriptUpdate(
            revision: UInt64(try Self.integer(reader, "revision")), upserted: upserted,
            removed: try Self.strings(reader, "removed"), isFinal: try reader.bool("final"))
    }

    private func stats(_ reader: FieldReader) throws(ProtocolError) -> SessionStats {
        SessionStats(
            audioSeconds: try reader.number("audio_seconds"), wordCount: try Self.integer(reader, "words"),
            unlabelledWordCount: try Self.integer(reader, "unlabelled_words"),
            speakerCount: try Self.integer(reader, "speakers"),
            firstLabelLatenciesSeconds: try Self.numbers(reader, "first_label_latency_seconds"),
            finalLabelLatenciesSeconds: try Self.numbers(reader, "final_label_latency_seconds"),
            chunkProcessingSeconds: try Self.numbers(reader, "chunk_processing_seconds"),
            realTimeFactor: try reader.optionalNumber("real_time_factor"),
            liveTurns: try Self.turns(reader, "live_turns"), finalTurns: try Self.turns(reader, "final_turns"))
    }

    // MARK: fields

    /// The server's strings and arrays have no device-side limit: a transcript's utterance text or an
    /// error message may be longer than anything a device may send.
    private static let limits = SessionConfig(maxWordsPerMessage: .max, maxStringLength: .max)

    private static func reader(_ members: [String: JSONValue], _ context: String) -> FieldReader {
        FieldReader(object: members, context: context, config: limits)
    }

    /// A whole, non-negative number that fits an `Int`.
    private static func integer(_ reader: FieldReader, _ name: String) throws(ProtocolError) -> Int {
        let number = try reader.number(name)
        guard number == number.rounded(), number >= 0, number < 9_007_199_254_740_992 else {
            throw .invalid(name, in: reader.context, "must be a whole number ≥ 0, got \(number)")
        }
        return Int(number)
    }

    private static func numbers(_ reader: FieldReader, _ name: String) throws(ProtocolError) -> [Double] {
        var numbers: [Double] = []
        for (index, element) in try reader.array(name).enumerated() {
            guard case .number(let number) = element else {
                throw .invalid(name, in: reader.context, "must hold numbers; element \(index) is \(element.typeName)")
            }
            numbers.append(number)
        }
        return numbers
    }

    private static func strings(_ reader: FieldReader, _ name: String) throws(ProtocolError) -> [String] {
        var strings: [String] = []
        for (index, element) in try reader.array(name).enumerated() {
            guard case .string(let string) = element else {
                throw .invalid(name, in: reader.context, "must hold strings; element \(index) is \(element.typeName)")
            }
            strings.append(string)
        }
        return strings
    }

    private static func turns(_ reader: FieldReader, _ name: String) throws(ProtocolError) -> [WireTurn] {
        try reader.objects(name, limit: .max) { (turn: FieldReader) throws(ProtocolError) in
            WireTurn(speaker: try turn.string("speaker", allowEmpty: true), startSeconds: try turn.number("start"), endSeconds: try turn.number("end"))
        }
    }
}
