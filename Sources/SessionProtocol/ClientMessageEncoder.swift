/// Encodes client messages as JSON text: what a device sends, for a device that lives inside the
/// server (the console's test recordings) and for tests. `ClientMessageDecoder` reads back exactly
/// the message that was encoded.
///
/// Optional fields are left out when absent (unlike the server's messages, which write `null`): a
/// device sends only what it means, and `options` `{}` is the same as none.
public struct ClientMessageEncoder: Sendable {
    public init() {}

    public func encode(_ message: ClientMessage) -> String {
        var writer = JSONTextWriter()
        writer.beginObject()
        writer.key("type"); writer.string(message.type.rawValue)
        switch message {
        case .start(let start):
            write(start, to: &writer)
        case .words(let words):
            writer.key("result_id"); writer.string(words.resultID)
            writer.key("final"); writer.bool(words.isFinal)
            writer.key("words")
            writer.beginArray()
            for word in words.words {
                writer.beginObject()
                writer.key("text"); writer.string(word.text)
                writer.key("start"); writer.number(word.startSeconds)
                writer.key("end"); writer.number(word.endSeconds)
                if let confidence = word.confidence { writer.key("confidence"); writer.number(confidence) }
                writer.endObject()
            }
            writer.endArray()
        case .segments(let segments):
            writer.key("segments")
            writer.beginArray()
            for segment in segments {
                writer.beginObject()
                writer.key("speaker"); writer.string(segment.speaker)
                writer.key("start"); writer.number(segment.startSeconds)
                writer.key("end"); writer.number(segment.endSeconds)
                if let confidence = segment.confidence { writer.key("confidence"); writer.number(confidence) }
                writer.endObject()
            }
            writer.endArray()
        case .renameSpeaker(let speaker, let name):
            writer.key("speaker"); writer.string(speaker)
            writer.key("name"); writer.string(name)
        case .mergeSpeakers(let from, let into):
            writer.key("from"); writer.string(from)
            writer.key("into"); writer.string(into)
        case .finalize, .keepalive:
            break
        }
        writer.endObject()
        return writer.text
    }

    /// The start's fields. A provider the start did not name is left out, so the server may choose
    /// (the device's console setting, else its default), as for a device that names none.
    private func write(_ start: StartRequest, to writer: inout JSONTextWriter) {
        if let conversationID = start.conversationID { writer.key("conversation_id"); writer.string(conversationID) }
        writer.key("device_id"); writer.string(start.deviceID)
        if start.providerNamed { writer.key("provider"); writer.string(start.provider) }
        writer.key("sample_rate"); writer.integer(start.sampleRate)
        writer.key("encoding"); writer.string(start.encoding.rawValue)
        if let language = start.language { writer.key("language"); writer.string(language) }
        if let options = Self.object(start.optionsJSON) { writer.key("options"); writer.value(options) }
        if let offset = start.audioOffsetSeconds { writer.key("audio_offset_seconds"); writer.number(offset) }
        if start.asr != .device { writer.key("asr"); writer.string(start.asr.rawValue) }
        if !start.shadowProviders.isEmpty {
            writer.key("shadow_providers")
            writer.beginArray()
            for shadow in start.shadowProviders { writer.string(shadow) }
            writer.endArray()
        }
        let shadowOptions = start.shadowOptionsJSON.compactMapValues { Self.object($0, keepingEmpty: true) }
        if !shadowOptions.isEmpty { writer.key("shadow_options"); writer.value(.object(shadowOptions)) }
        if start.storeAudio { writer.key("store_audio"); writer.bool(true) }
    }

    /// Options text (canonical JSON of an object, as `StartRequest` holds it) as a value to write; nil
    /// for text that is not an object, and for `{}` unless `keepingEmpty` (a shadow's own `{}` is
    /// kept: it says the shadow was given options).
    private static func object(_ text: String, keepingEmpty: Bool = false) -> JSONValue? {
        guard case .object(let members)? = try? JSONParser().parse(text), keepingEmpty || !members.isEmpty else { return nil }
        return .object(members)
    }
}
