/// What the device said besides audio, kept until the server has stored it: every ASR result (the
/// latest version of each `result_id`) and every device segment. Results are confirmed by the words the
/// server echoes with `stored: true`; after a reconnect the unconfirmed ones are sent again. Re-sending
/// is safe: a `result_id` replaces its earlier version on the server.
public struct DeliveryLedger: Sendable {
    public struct Result: Sendable, Equatable {
        public var resultID: String
        public var isFinal: Bool
        public var words: [SpokenWord]
    }

    private var order: [String] = []
    private var results: [String: Result] = [:]
    /// Words (text and start in ms, on the session's own timeline) the server reported stored.
    private var stored: Set<WordKey> = []
    public private(set) var segments: [SpeakerSyncSegment] = []

    struct WordKey: Hashable {
        var text: String
        var startMilliseconds: Int64
    }

    public init() {}

    static func key(_ text: String, _ startSeconds: Double) -> WordKey {
        WordKey(text: text, startMilliseconds: Int64((startSeconds * 1000).rounded()))
    }

    /// A result as the app sends it; a later version with the same id replaces the earlier one.
    public mutating func record(resultID: String, words: [SpokenWord], isFinal: Bool) {
        if results[resultID] == nil { order.append(resultID) }
        results[resultID] = Result(resultID: resultID, isFinal: isFinal, words: words)
    }

    public mutating func record(_ segments: [SpeakerSyncSegment]) {
        self.segments += segments
    }

    /// The server reported these words (session timeline) as stored.
    public mutating func confirm(text: String, startSeconds: Double) {
        stored.insert(Self.key(text, startSeconds))
    }

    /// A result is delivered when it is final and every word of it came back stored (an empty final
    /// result, which clears a volatile one, counts as delivered once sent).
    public func isDelivered(_ result: Result) -> Bool {
        result.isFinal && result.words.allSatisfy { stored.contains(Self.key($0.text, $0.startSeconds)) }
    }

    /// Results to send again after a reconnect, in the order they were first given.
    public var undelivered: [Result] {
        order.compactMap { results[$0] }.filter { !isDelivered($0) }
    }

    /// Forgets delivered results (keeps memory flat over a long meeting); returns how many went.
    @discardableResult
    public mutating func compact() -> Int {
        let delivered = order.filter { results[$0].map(isDelivered) ?? true }
        guard !delivered.isEmpty else { return 0 }
        let gone = Set(delivered)
        for id in delivered {
            for word in results[id]?.words ?? [] { stored.remove(Self.key(word.text, word.startSeconds)) }
            results[id] = nil
        }
        order.removeAll { gone.contains($0) }
        return delivered.count
    }

    /// Segments that end after `seconds` (session timeline): the ones a resume from there sends again.
    public func segments(endingAfter seconds: Double) -> [SpeakerSyncSegment] {
        segments.filter { $0.endSeconds > seconds }
    }

    /// The segments a resume at `seconds` (session timeline) sends again: those ending after it, and
    /// every one ending after the start of a word the server has not yet confirmed stored. Why the
    /// second: a segment the server received on the dropped connection may not have been stored when
    /// the new connection began (its turns are written behind), while the words it labels come after
    /// it (a recogniser's delay) and are sent again; without it those words would be stored with no
    /// speaker (seen in CI: `ResilienceEndToEndTests`, the network dropping every connection).
    public func segmentsToResend(resumingAt seconds: Double) -> [SpeakerSyncSegment] {
        let unconfirmed = undelivered.flatMap(\.words).filter { !stored.contains(Self.key($0.text, $0.startSeconds)) }
        let from = min(seconds, unconfirmed.map(\.startSeconds).min() ?? seconds)
        return segments(endingAfter: from)
    }

    public var resultCount: Int { order.count }
}
