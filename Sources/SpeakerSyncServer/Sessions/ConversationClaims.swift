import Synchronization

/// At most one live session per conversation. When a device reconnects before the server noticed
/// that its old connection died, the new session takes the conversation over: the old one stops
/// accepting input, flushes what it has to the store, and only then does the new one load the
/// conversation, so no acknowledged word is lost and the conversation is not split.
final class ConversationClaims: Sendable {
    private let owners = Mutex<[String: SessionRunner]>([:])

    /// Registers `runner` as the owner; returns the previous live owner, if any.
    func claim(_ conversationID: String, by runner: SessionRunner) -> SessionRunner? {
        owners.withLock { owners in
            let previous = owners[conversationID]
            owners[conversationID] = runner
            return previous === runner ? nil : previous
        }
    }

    /// Releases the claim if `runner` still holds it.
    func release(_ conversationID: String, by runner: SessionRunner) {
        owners.withLock { owners in
            if owners[conversationID] === runner { owners[conversationID] = nil }
        }
    }

    /// The live session of a conversation on this server, if any.
    func owner(of conversationID: String) -> SessionRunner? {
        owners.withLock { $0[conversationID] }
    }

    var liveCount: Int { owners.withLock { $0.count } }
}
