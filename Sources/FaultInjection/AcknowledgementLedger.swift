import SessionProtocol
import Synchronization

/// What every device of a fault run sent and was told, kept as it happens (so a device that fails
/// still leaves its record): the words each conversation sent, the words the server said were
/// stored, and which connections the server closed with 1000. The checker holds PostgreSQL to it.
public final class AcknowledgementLedger: Sendable {
    /// A word on a conversation's timeline: its text and its start, to the millisecond.
    public struct WordKey: Hashable, Sendable, CustomStringConvertible {
        public var text: String
        public var startMilliseconds: Int
        public init(text: String, startSeconds: Double) {
            self.text = text
            self.startMilliseconds = Int((startSeconds * 1000).rounded())
        }
        public var description: String { "\(text)@\(Double(startMilliseconds) / 1000)" }
    }

    public struct Conversation: Sendable {
        public var sent: Set<WordKey> = []
        public var acknowledged: Set<WordKey> = []
        /// Words sent on connections the server closed with 1000 after their finalize: all must be stored.
        public var sentBeforeFinalizedClose: Set<WordKey> = []
        public var kitDevice = false
        public var finalized = false
    }

    private let state = Mutex<[String: Conversation]>([:])
    private let textRefusals = Atomic<Int>(0)

    /// `invalid_text` errors the server sent (messages refused for text PostgreSQL cannot store).
    public var invalidTextRefusals: Int { textRefusals.load(ordering: .relaxed) }

    public init() {}

    public func sent(_ conversationID: String, _ words: [WordKey], kit: Bool) {
        state.withLock { all in
            all[conversationID, default: Conversation()].sent.formUnion(words)
            if kit { all[conversationID, default: Conversation()].kitDevice = true }
        }
    }

    /// A server message (JSON text) seen by a device of `conversationID`.
    public func observe(_ conversationID: String, message text: String) {
        if text.hasPrefix(#"{"type":"error","code":"invalid_text""#) { textRefusals.add(1, ordering: .relaxed) }
        // The prefix first: only transcripts are worth decoding here (the encoder writes `type` first).
        guard text.hasPrefix(#"{"type":"transcript""#),
              case .transcript(let update)? = try? ServerMessageDecoder().decode(text) else { return }
        let stored = update.upserted.flatMap(\.words).filter(\.isStored).map { WordKey(text: $0.text, startSeconds: $0.startSeconds) }
        guard !stored.isEmpty else { return }
        state.withLock { $0[conversationID, default: Conversation()].acknowledged.formUnion(stored) }
    }

    /// The server closed a connection with 1000 after its finalize: `words` (what that connection,
    /// or the device across its reconnects, sent) must all be stored.
    public func finalizedClose(_ conversationID: String, sent words: Set<WordKey>) {
        state.withLock { all in
            all[conversationID, default: Conversation()].finalized = true
            all[conversationID, default: Conversation()].sentBeforeFinalizedClose.formUnion(words)
        }
    }

    public var conversations: [String: Conversation] { state.withLock { $0 } }
}
