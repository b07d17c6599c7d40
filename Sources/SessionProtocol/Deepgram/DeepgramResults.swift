/// Turns a session's messages into Deepgram's: `Results`, `UtteranceEnd`, `Metadata` and `Error`.
/// Pure: the caller passes each message the session sends and sends what this returns instead.
///
/// The two models differ in one way that matters. SpeakerSync revises: a word may get its speaker a
/// moment after it arrives, and finalize may relabel it. A Deepgram `is_final` result is never revised.
/// So a word is held back until it has its speaker, and goes out final once; a word still without one
/// goes anyway once a later word has one or `holdSeconds` of later speech arrived (a word is never held
/// for ever), and everything held goes at `Finalize` and at the end. Relabelling after that is not
/// sent (Deepgram has no message for it); the stored conversation, whose id is `request_id`, has it.
public struct DeepgramResults: Sendable {
    /// Audio seconds after a word by which it goes out even without a speaker.
    public static let holdSeconds = 3.0

    public let options: DeepgramOptions
    /// `created` of `Metadata` (ISO 8601), fixed when the connection opened.
    private let createdAt: String
    private var requestID = ""
    private var durationSeconds = 0.0
    /// The utterances still holding a word not sent as final: wire id → utterance.
    private var utterances: [String: WireUtterance] = [:]
    /// Words already sent as final, by `WordKey`.
    private var sent: Set<WordKey> = []
    /// Everything before this start (seconds) has been sent; `sent` forgets keys older than a minute
    /// before it, so a long session's memory stays bounded.
    private var sentBeforeSeconds = -Double.infinity
    /// Deepgram's speaker numbers, by SpeakerSync label.
    private var speakerNumbers: [String: Int] = [:]

    private struct WordKey: Hashable {
        var startMilliseconds: Int64
        var text: String
        init(_ word: WireWord) {
            startMilliseconds = Int64((word.startSeconds * 1000).rounded())
            text = word.text
        }
    }

    public init(options: DeepgramOptions, createdAt: String) {
        self.options = options
        self.createdAt = createdAt
    }

    /// Deepgram's messages for one message of the session (often none).
    public mutating func translate(_ message: ServerMessage) -> [String] {
        switch message {
        case .session(let info):
            requestID = info.conversationID
            return []
        case .speakers:
            return []
        case .stats(let stats):
            // The session's last message, after its final transcript: Deepgram's last is `Metadata`.
            durationSeconds = stats.audioSeconds
            return [metadata()]
        case .error(let error):
            return [Self.errorText(code: error.codeName, message: error.message)]
        case .transcript(let update):
            for id in update.removed { utterances[id] = nil }
            for utterance in update.upserted { utterances[utterance.id] = utterance }
            if update.isFinal { return flush(fromFinalize: false) }
            return emitReady()
        }
    }

    /// Every word held back goes out as final (`Finalize` from the client: `fromFinalize`).
    public mutating func flush(fromFinalize: Bool) -> [String] {
        let pending = pendingWords()
        guard !pending.isEmpty else { return [] }
        return finalTexts(pending, speechFinal: true, fromFinalize: fromFinalize)
    }

    // MARK: - what goes when

    private func pendingWords() -> [WireWord] {
        utterances.values.flatMap(\.words)
            .filter { $0.startSeconds >= sentBeforeSeconds - 60 && !sent.contains(WordKey($0)) }
            .sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
    }

    private mutating func emitReady() -> [String] {
        let pending = pendingWords()
        guard !pending.isEmpty else { return [] }
        var readyCount = pending.count
        if options.diarize {
            // The longest prefix in which every word has a speaker, is followed by a word that has one,
            // or lies `holdSeconds` before the newest word's end.
            let newestEnd = pending.map(\.endSeconds).max() ?? 0
            var laterLabelled = false
            var ready = [Bool](repeating: false, count: pending.count)
            for index in pending.indices.reversed() {
                let word = pending[index]
                ready[index] = word.speaker != nil || laterLabelled || word.endSeconds <= newestEnd - Self.holdSeconds
                if word.speaker != nil { laterLabelled = true }
            }
            readyCount = ready.firstIndex(of: false) ?? pending.count
        }
        var texts: [String] = []
        if readyCount > 0 {
            texts += finalTexts(Array(pending[..<readyCount]), speechFinal: readyCount == pending.count, fromFinalize: false)
        }
        if options.interimResults, readyCount < pending.count {
            texts.append(resultsText(Array(pending[readyCount...]), isFinal: false, speechFinal: false, fromFinalize: false))
        }
        return texts
    }

    private mutating func finalTexts(_ words: [WireWord], speechFinal: Bool, fromFinalize: Bool) -> [String] {
        for word in words { sent.insert(WordKey(word)) }
        // An utterance whose every word went out is not kept: each update looks only at what is held,
        // not at the whole conversation. A later revision of it comes back whole and is filtered then.
        utterances = utterances.filter { !$0.value.words.allSatisfy { sent.contains(WordKey($0)) } }
        if let last = words.last, last.startSeconds > sentBeforeSeconds {
            sentBeforeSeconds = last.startSeconds
            let horizon = Int64((sentBeforeSeconds - 60) * 1000)
            if sent.count > 4096 { sent = sent.filter { $0.startMilliseconds >= horizon } }
        }
        var texts = [resultsText(words, isFinal: true, speechFinal: speechFinal, fromFinalize: fromFinalize)]
        if speechFinal, options.utteranceEndMilliseconds != nil, let last = words.last {
            var writer = JSONTextWriter()
            writer.beginObject()
            writer.key("type"); writer.string("UtteranceEnd")
            writer.key("channel"); channelIndex(&writer)
            writer.key("last_word_end"); writer.number(Self.milliseconds(last.endSeconds))
            writer.endObject()
            texts.append(writer.text)
        }
        return texts
    }

    // MARK: - messages

    private mutating func speakerNumber(_ label: String) -> Int {
        if let number = speakerNumbers[label] { return number }
        // "Speaker 3" is speaker 2: Deepgram counts from 0. Other labels (a device's own) in order seen.
        let number: Int
        if label.hasPrefix("Speaker "), let n = Int(label.dropFirst("Speaker ".count)), n >= 1,
           !speakerNumbers.values.contains(n - 1) {
            number = n - 1
        } else {
            number = (speakerNumbers.values.max() ?? -1) + 1
        }
        speakerNumbers[label] = number
        return number
    }

    private mutating func resultsText(_ words: [WireWord], isFinal: Bool, speechFinal: Bool, fromFinalize: Bool) -> String {
        let start = words.first?.startSeconds ?? 0
        let end = words.map(\.endSeconds).max() ?? start
        let confidences = words.map { $0.confidence ?? 1 }
        var writer = JSONTextWriter()
        writer.beginObject()
        writer.key("type"); writer.string("Results")
        writer.key("channel_index"); channelIndex(&writer)
        writer.key("duration"); writer.number(Self.milliseconds(max(0, end - start)))
        writer.key("start"); writer.number(Self.milliseconds(start))
        writer.key("is_final"); writer.bool(isFinal)
        writer.key("speech_final"); writer.bool(speechFinal)
        writer.key("from_finalize"); writer.bool(fromFinalize)
        writer.key("channel"); writer.beginObject()
        writer.key("alternatives"); writer.beginArray(); writer.beginObject()
        writer.key("transcript"); writer.string(words.map(\.text).joined(separator: " "))
        writer.key("confidence"); writer.number(confidences.isEmpty ? 0 : confidences.reduce(0, +) / Double(confidences.count))
        writer.key("words"); writer.beginArray()
        for word in words {
            writer.beginObject()
            writer.key("word"); writer.string(word.text.lowercased())
            writer.key("start"); writer.number(Self.milliseconds(word.startSeconds))
            writer.key("end"); writer.number(Self.milliseconds(word.endSeconds))
            writer.key("confidence"); writer.number(word.confidence ?? 1)
            if options.diarize, let label = word.speaker {
                writer.key("speaker"); writer.integer(speakerNumber(label))
                if let confidence = word.speakerConfidence { writer.key("speaker_confidence"); writer.number(confidence) }
            }
            writer.key("punctuated_word"); writer.string(word.text)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject(); writer.endArray()
        writer.endObject()
        writer.key("metadata"); writer.beginObject()
        writer.key("request_id"); writer.string(requestID)
        writer.key("model_info"); modelInfo(&writer)
        writer.key("model_uuid"); writer.string(Self.modelUUID)
        writer.endObject()
        writer.endObject()
        return writer.text
    }

    private func metadata() -> String {
        var writer = JSONTextWriter()
        writer.beginObject()
        writer.key("type"); writer.string("Metadata")
        writer.key("transaction_key"); writer.string("deprecated")
        writer.key("request_id"); writer.string(requestID)
        writer.key("sha256"); writer.string("")
        writer.key("created"); writer.string(createdAt)
        writer.key("duration"); writer.number(Self.milliseconds(durationSeconds))
        writer.key("channels"); writer.integer(1)
        writer.key("models"); writer.beginArray(); writer.string(Self.modelUUID); writer.endArray()
        writer.key("model_info"); writer.beginObject()
        writer.key(Self.modelUUID); modelInfo(&writer)
        writer.endObject()
        writer.endObject()
        return writer.text
    }

    /// A Deepgram `Error` message.
    public static func errorText(code: String, message: String) -> String {
        var writer = JSONTextWriter()
        writer.beginObject()
        writer.key("type"); writer.string("Error")
        writer.key("variant"); writer.string("speakersync")
        writer.key("description"); writer.string(message)
        writer.key("code"); writer.string(code)
        writer.key("message"); writer.string(message)
        writer.endObject()
        return writer.text
    }

    /// Seconds rounded to the millisecond: the timeline's sums (offset + position) carry binary noise
    /// such as 6.760000000000001 that says nothing.
    static func milliseconds(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    /// A fixed id for "SpeakerSync's server-side recogniser with the session's provider".
    static let modelUUID = "5b3e4c1a-7a0d-4c39-9f55-5350454b5359"

    private func modelInfo(_ writer: inout JSONTextWriter) {
        writer.beginObject()
        writer.key("name"); writer.string(options.model)
        writer.key("version"); writer.string("speakersync")
        writer.key("arch"); writer.string("speakersync")
        writer.endObject()
    }

    private func channelIndex(_ writer: inout JSONTextWriter) {
        writer.beginArray(); writer.integer(0); writer.integer(1); writer.endArray()
    }
}
