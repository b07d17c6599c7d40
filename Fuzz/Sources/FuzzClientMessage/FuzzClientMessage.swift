// ClientMessageDecoder, the decoder of every WebSocket text message a device sends, and
// StartParameters.fromQuery, the reader of the upgrade URL's query.
//
// An input starting with `?` is also read as a query (`name=value` pairs split on `&`, no
// percent-decoding: the transport has done that) whose parameters are the start's defaults.
//
// Properties: whatever is accepted satisfies the limits the rest of the server relies on (times
// finite, non-negative, end ≥ start; confidences in 0…1; at most maxWordsPerMessage words or
// segments; strings no longer than maxStringLength; a merge between two different speakers; a
// supported sample rate), and decoding the same text twice gives the same message.
import SessionProtocol

let config = SessionConfig.default

func check(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("accepted a message that breaks the rules: \(what())") }
}

func checkSpan(_ start: Double, _ end: Double, _ confidence: Double?) {
    check(start.isFinite && end.isFinite && start >= 0 && end >= start, "span \(start)…\(end)")
    if let confidence { check((0...1).contains(confidence), "confidence \(confidence)") }
}

func checkString(_ text: String) {
    check(text.unicodeScalars.count <= config.maxStringLength, "a string of \(text.unicodeScalars.count) scalars")
}

func checkAccepted(_ message: ClientMessage) {
    switch message {
    case .words(let words):
        check(words.words.count <= config.maxWordsPerMessage, "\(words.words.count) words")
        checkString(words.resultID)
        for word in words.words {
            checkSpan(word.startSeconds, word.endSeconds, word.confidence)
            checkString(word.text)
        }
    case .segments(let segments):
        check(segments.count <= config.maxWordsPerMessage, "\(segments.count) segments")
        for segment in segments {
            checkSpan(segment.startSeconds, segment.endSeconds, segment.confidence)
            check(!segment.speaker.isEmpty, "an empty speaker")
            checkString(segment.speaker)
        }
    case .mergeSpeakers(let from, let into):
        check(from != into, "a merge of \(from) into itself")
    case .renameSpeaker(let speaker, let name):
        check(!speaker.isEmpty, "a rename of an empty speaker")
        checkString(name)
    case .start(let start):
        check(config.sampleRateRange.contains(start.sampleRate), "sample rate \(start.sampleRate)")
        if let offset = start.audioOffsetSeconds { check(offset >= 0, "audio offset \(offset)") }
    case .finalize, .keepalive:
        break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // lws hands the server only valid UTF-8 text frames; invalid bytes become U+FFFD here.
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let decoder = ClientMessageDecoder(config: config)

    var defaults = StartParameters()
    var messageText = text
    if text.hasPrefix("?") {
        // `?query` then an optional newline and the message.
        let parts = text.dropFirst().split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        for pair in parts[0].split(separator: "&") {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            query[String(halves[0])] = halves.count > 1 ? String(halves[1]) : ""
        }
        guard let fromQuery = try? StartParameters.fromQuery(query, config: config) else { return 0 }
        if let rate = fromQuery.sampleRate { check(config.sampleRateRange.contains(rate), "query sample rate \(rate)") }
        defaults = fromQuery
        messageText = parts.count > 1 ? String(parts[1]) : ""
    }

    guard let envelope = try? decoder.envelope(messageText) else { return 0 }
    let first = try? decoder.decode(envelope, startDefaults: defaults)
    let second = try? decoder.decode(decoder.envelope(messageText), startDefaults: defaults)
    guard first == second else { fatalError("decoding the same text twice gave \(String(describing: first)) and \(String(describing: second))") }
    if let first { checkAccepted(first) }
    return 0
}
