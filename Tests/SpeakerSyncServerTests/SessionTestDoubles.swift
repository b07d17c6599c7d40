import SpeakerSyncStore
import Foundation
import Synchronization
import TranscriptMerge
import WebSocketTransport
@testable import SpeakerSyncServer

/// A `SessionStore` in memory, for testing session logic without PostgreSQL. It applies steps the
/// way the PostgreSQL store does (upsert by key, delete by key) so a resume sees the same state.
final class InMemorySessionStore: SessionStore {
    struct Conversation {
        var state: ConversationState
        var words: [WordID: LabelledWord] = [:]
        var turns: [String: (provider: String, turn: SpeakerTurn)] = [:]
        var speakers: [String: SessionSpeaker] = [:]
        var keyLabels: [String: String] = [:]
    }
    let conversations = Mutex<[String: Conversation]>([:])
    let failWrites = Atomic<Bool>(false)
    /// Completions run here, in order, as `SessionStore` promises (and `StoreWriter` does).
    private let completions = DispatchQueue(label: "in-memory-store.completions")
    /// While set, steps are applied but their completions wait (a commit in flight) until
    /// `releaseHeldCompletions()`.
    let holdCompletions = Atomic<Bool>(false)
    private let held = Mutex<[@Sendable () -> Void]>([])
    /// Every step queued, in order: whether it ended its conversation, and how many words it changed.
    let persisted = Mutex<[(conversationEnded: Bool, changedWords: Int)]>([])

    /// Runs the held completions, in order, and stops holding.
    func releaseHeldCompletions() {
        holdCompletions.store(false, ordering: .relaxed)
        let waiting = held.withLock { held in
            defer { held = [] }
            return held
        }
        for completion in waiting { completions.async(execute: completion) }
    }

    func persist(_ step: PersistStep, conversationID: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        persisted.withLock { $0.append((step.conversationEnded, step.changedWords.count)) }
        if failWrites.load(ordering: .relaxed) {
            completions.async { completion(.failure(CocoaError(.fileWriteUnknown))) }
            return
        }
        conversations.withLock { all in
            if let state = step.conversation {
                if all[conversationID] == nil { all[conversationID] = Conversation(state: state) } else { all[conversationID]!.state = state }
            }
            guard all[conversationID] != nil else { return }
            for word in step.changedWords { all[conversationID]!.words[word.id] = word }
            for id in step.removedWords { all[conversationID]!.words[id] = nil }
            for (provider, turn) in step.upsertedTurns { all[conversationID]!.turns[turn.id] = (provider, turn) }
            for (_, id) in step.removedTurns { all[conversationID]!.turns[id] = nil }
            for speaker in step.speakers { all[conversationID]!.speakers[speaker.label] = speaker }
            for (key, label) in step.keyLabels { all[conversationID]!.keyLabels[key] = label }
        }
        if holdCompletions.load(ordering: .relaxed) {
            held.withLock { $0.append { completion(.success(())) } }
            return
        }
        completions.async { completion(.success(())) }
    }

    func load(conversationID: String) throws -> StoredConversation? {
        conversations.withLock { all in
            guard let conversation = all[conversationID] else { return nil }
            return StoredConversation(
                state: conversation.state,
                words: conversation.words.values.sorted { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) },
                turns: Array(conversation.turns.values),
                speakers: conversation.speakers.values.sorted { $0.label.count == $1.label.count ? $0.label < $1.label : $0.label.count < $1.label.count },
                keyLabels: conversation.keyLabels
            )
        }
    }

    func words(_ conversationID: String) -> [LabelledWord] {
        conversations.withLock { ($0[conversationID]?.words.values).map { Array($0) } ?? [] }
            .sorted { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) }
    }
}

/// Records what sessions send, per connection, as parsed JSON.
final class RecordingTransport: SessionTransport {
    struct Record {
        var messages: [String] = []
        var closeCode: UInt16?
        var paused = false
    }
    let records = Mutex<[ConnectionID: Record]>([:])

    func send(text: String, to connection: ConnectionID) {
        records.withLock { $0[connection, default: Record()].messages.append(text) }
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        records.withLock { $0[connection, default: Record()].closeCode = code }
    }

    func setReceivingPaused(_ paused: Bool, for connection: ConnectionID) {
        records.withLock { $0[connection, default: Record()].paused = paused }
    }

    func messages(_ connection: ConnectionID) -> [[String: Any]] {
        records.withLock { $0[connection]?.messages ?? [] }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    func closeCode(_ connection: ConnectionID) -> UInt16? {
        records.withLock { $0[connection]?.closeCode }
    }

    /// Waits (bounded) until `condition` holds for the connection's messages, then returns every message
    /// sent so far. Read again after the condition holds: a condition on something else (the close code)
    /// can turn true after the snapshot it was given, and the session sends everything before it closes.
    func wait(for connection: ConnectionID, timeoutSeconds: Double = 120, until condition: ([[String: Any]]) -> Bool) async throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        while ContinuousClock.now < deadline {
            if condition(messages(connection)) { return messages(connection) }
            try await Task.sleep(for: .milliseconds(5))
        }
        return messages(connection)
    }
}
