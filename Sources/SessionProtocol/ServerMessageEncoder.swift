/// Encodes server messages as JSON text.
///
/// Output is deterministic: `type` first, then the fields in the order documented in
/// docs/protocol.md; absent optional values are written as `null` rather than left out, so every
/// message of a type has the same keys. Times are seconds.
public struct ServerMessageEncoder: Sendable {
    public init() {}

    public func encode(_ message: ServerMessage) -> String {
        var writer = JSONTextWriter()
        writer.beginObject()
        switch message {
        case .session(let info):
            writer.key("type"); writer.string("session")
            writer.key("conversation_id"); writer.string(info.conversationID)
            writer.key("provider"); writer.string(info.provider)
            if let source = info.providerSource { writer.key("provider_source"); writer.string(source) }
            writer.key("sample_rate"); writer.integer(info.sampleRate)
            writer.key("encoding"); writer.string(info.encoding.rawValue)
            writer.key("asr"); writer.string(info.asr.rawValue)
            writer.key("resumed"); writer.bool(info.resumed)
            writer.key("audio_offset_seconds"); writer.number(info.audioOffsetSeconds)
            writer.key("server_version"); writer.string(info.serverVersion)
            writer.key("protocol_version"); writer.integer(info.protocolVersion)
        case .transcript(let update):
            writer.key("type"); writer.string("transcript")
            writer.key("revision"); writer.integer(update.revision)
            writer.key("final"); writer.bool(update.isFinal)
            writer.key("upserted")
            writer.beginArray()
            for utterance in update.upserted { write(utterance, to: &writer) }
            writer.endArray()
            writer.key("removed")
            writer.beginArray()
            for id in update.removed { writer.string(id) }
            writer.endArray()
        case .speakers(let speakers):
            writer.key("type"); writer.string("speakers")
            writer.key("speakers")
            writer.beginArray()
            for speaker in speakers {
                writer.beginObject()
                writer.key("label"); writer.string(speaker.label)
                writer.key("name"); writer.string(speaker.name)
                writer.key("merged_into"); writer.optionalString(speaker.mergedInto)
                writer.endObject()
            }
            writer.endArray()
        case .error(let error):
            writer.key("type"); writer.string("error")
            writer.key("code"); writer.string(error.code.rawValue)
            writer.key("message"); writer.string(error.message)
            writer.key("fatal"); writer.bool(error.fatal)
        case .stats(let stats):
            writer.key("type"); writer.string("stats")
            writer.key("audio_seconds"); writer.number(stats.audioSeconds)
            writer.key("words"); writer.integer(stats.wordCount)
            writer.key("unlabelled_words"); writer.integer(stats.unlabelledWordCount)
            writer.key("speakers"); writer.integer(stats.speakerCount)
            writer.key("first_label_latency_seconds"); numbers(stats.firstLabelLatenciesSeconds, to: &writer)
            writer.key("final_label_latency_seconds"); numbers(stats.finalLabelLatenciesSeconds, to: &writer)
            writer.key("chunk_processing_seconds"); numbers(stats.chunkProcessingSeconds, to: &writer)
            writer.key("real_time_factor"); writer.optionalNumber(stats.realTimeFactor)
            writer.key("live_turns"); turns(stats.liveTurns, to: &writer)
            writer.key("final_turns"); turns(stats.finalTurns, to: &writer)
        }
        writer.endObject()
        return writer.text
    }

    private func numbers(_ values: [Double], to writer: inout JSONTextWriter) {
        writer.beginArray()
        for value in values { writer.number(value) }
        writer.endArray()
    }

    private func turns(_ turns: [WireTurn], to writer: inout JSONTextWriter) {
        writer.beginArray()
        for turn in turns {
            writer.beginObject()
            writer.key("speaker"); writer.string(turn.speaker)
            writer.key("start"); writer.number(turn.startSeconds)
            writer.key("end"); writer.number(turn.endSeconds)
            writer.endObject()
        }
        writer.endArray()
    }

    private func write(_ utterance: WireUtterance, to writer: inout JSONTextWriter) {
        writer.beginObject()
        writer.key("id"); writer.string(utterance.id)
        writer.key("speaker"); writer.optionalString(utterance.speaker)
        writer.key("name"); writer.optionalString(utterance.name)
        writer.key("start"); writer.number(utterance.startSeconds)
        writer.key("end"); writer.number(utterance.endSeconds)
        writer.key("text"); writer.string(utterance.text)
        writer.key("words")
        writer.beginArray()
        for word in utterance.words {
            writer.beginObject()
            writer.key("text"); writer.string(word.text)
            writer.key("start"); writer.number(word.startSeconds)
            writer.key("end"); writer.number(word.endSeconds)
            writer.key("speaker"); writer.optionalString(word.speaker)
            writer.key("speaker_confidence"); writer.optionalNumber(word.speakerConfidence)
            writer.key("confidence"); writer.optionalNumber(word.confidence)
            writer.key("final"); writer.bool(word.isFinal)
            writer.key("stored"); writer.bool(word.isStored)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}
