/// Encodes device messages as JSON text: what SpeakerSyncKit (and through it the CLI, eval and the fault
/// harness) sends. The inverse of `ClientMessageDecoder`, which the round-trip tests hold it to.
///
/// Keys are written in sorted order and strings escaped as Foundation's `JSONSerialization` does
/// (`JSONTextWriter.Escaping.foundation`): the kit built these messages with `JSONSerialization` and
/// `.sortedKeys` before this encoder existed, so its bytes on the wire did not change. Absent optional
/// values are left out (the server reads absent and `null` alike). Times are seconds.
public struct ClientMessageEncoder: Sendable {
    public init() {}

    public func encode(_ message: ClientMessage) -> String {
        switch message {
        case .start(let request):
            return encodeStart(StartParameters(request))
        case .words(let words):
            return object { writer in
                writer.key("final"); writer.bool(words.isFinal)
                writer.key("result_id"); writer.string(words.resultID)
                writer.key("type"); writer.string(ClientMessageType.words.rawValue)
                writer.key("words")
                writer.beginArray()
                for word in words.words {
                    writer.beginObject()
                    if let confidence = word.confidence { writer.key("confidence"); writer.number(confidence) }
                    writer.key("end"); writer.number(word.endSeconds)
                    writer.key("start"); writer.number(word.startSeconds)
                    writer.key("text"); writer.string(word.text)
                    writer.endObject()
                }
                writer.endArray()
            }
        case .segments(let segments):
            return object { writer in
                writer.key("segments")
                writer.beginArray()
                for segment in segments {
                    writer.beginObject()
                    if let confidence = segment.confidence { writer.key("confidence"); writer.number(confidence) }
                    writer.key("end"); writer.number(segment.endSeconds)
                    writer.key("speaker"); writer.string(segment.speaker)
                    writer.key("start"); writer.number(segment.startSeconds)
                    writer.endObject()
                }
                writer.endArray()
                writer.key("type"); writer.string(ClientMessageType.segments.rawValue)
            }
        case .renameSpeaker(let speaker, let name):
            return object { writer in
                writer.key("name"); writer.string(name)
                writer.key("speaker"); writer.string(speaker)
                writer.key("type"); writer.string(ClientMessageType.renameSpeaker.rawValue)
            }
        case .mergeSpeakers(let from, let into):
            return object { writer in
                writer.key("from"); writer.string(from)
                writer.key("into"); writer.string(into)
                writer.key("type"); writer.string(ClientMessageType.mergeSpeakers.rawValue)
            }
        case .finalize, .keepalive:
            return object { writer in
                writer.key("type"); writer.string(message.type.rawValue)
            }
        }
    }

    /// A `start` message carrying exactly the fields `parameters` sets. A device sends this rather than
    /// a `StartRequest` because it may leave out what the server completes (`device_id` with a device
    /// token, `provider` for the device's console setting). Option texts that are not JSON are left
    /// out rather than sent to be refused: the kit has always dropped them so.
    public func encodeStart(_ parameters: StartParameters) -> String {
        object { writer in
            if let asr = parameters.asr { writer.key("asr"); writer.string(asr.rawValue) }
            if let offset = parameters.audioOffsetSeconds { writer.key("audio_offset_seconds"); writer.number(offset) }
            if let id = parameters.conversationID { writer.key("conversation_id"); writer.string(id) }
            if let deviceID = parameters.deviceID { writer.key("device_id"); writer.string(deviceID) }
            if let encoding = parameters.encoding { writer.key("encoding"); writer.string(encoding.rawValue) }
            if let language = parameters.language { writer.key("language"); writer.string(language) }
            if let options = parameters.optionsJSON.flatMap(Self.json) { writer.key("options"); writer.value(options) }
            if let provider = parameters.provider { writer.key("provider"); writer.string(provider) }
            if let rate = parameters.sampleRate { writer.key("sample_rate"); writer.integer(rate) }
            if let shadowOptions = parameters.shadowOptionsJSON {
                writer.key("shadow_options"); writer.value(.object(shadowOptions.compactMapValues(Self.json)))
            }
            if let shadows = parameters.shadowProviders {
                writer.key("shadow_providers"); writer.value(.array(shadows.map(JSONValue.string)))
            }
            if let storeAudio = parameters.storeAudio { writer.key("store_audio"); writer.bool(storeAudio) }
            writer.key("type"); writer.string(ClientMessageType.start.rawValue)
        }
    }

    private func object(_ members: (inout JSONTextWriter) -> Void) -> String {
        var writer = JSONTextWriter(escaping: .foundation)
        writer.beginObject()
        members(&writer)
        writer.endObject()
        return writer.text
    }

    private static func json(_ text: String) -> JSONValue? {
        try? JSONParser().parse(text)
    }
}

extension StartParameters {
    /// The fields a `start` message needs to give `request` again: what the server would take as its
    /// default (no options, `asr` device, no shadows, audio not kept, a provider it chose) is left out.
    public init(_ request: StartRequest) {
        self.init(
            conversationID: request.conversationID, deviceID: request.deviceID,
            provider: request.providerNamed ? request.provider : nil, sampleRate: request.sampleRate,
            encoding: request.encoding, language: request.language,
            optionsJSON: request.optionsJSON == "{}" ? nil : request.optionsJSON,
            audioOffsetSeconds: request.audioOffsetSeconds, asr: request.asr == .device ? nil : request.asr,
            shadowProviders: request.shadowProviders.isEmpty ? nil : request.shadowProviders,
            shadowOptionsJSON: request.shadowOptionsJSON.isEmpty ? nil : request.shadowOptionsJSON,
            storeAudio: request.storeAudio ? true : nil)
    }
}
