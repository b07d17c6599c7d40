import Logging
import SessionProtocol
import Synchronization

/// What the in-process device has received from its session, read as a device reads it: the
/// server's messages decoded (`ServerMessageDecoder`), transcript updates applied in order (upserts
/// and removals by utterance id), and how the connection closed.
final class DeviceInbox: Sendable {
    struct State: Sendable {
        /// The `session` message: the start was accepted.
        var session: SessionInfo?
        /// The transcript as the device holds it, by utterance id.
        var utterances: [String: WireUtterance] = [:]
        var stats: SessionStats?
        var errors: [WireError] = []
        /// Set once the connection is closed, by either side.
        var close: (code: UInt16?, reason: String)?

        /// Every word the device holds, in time order.
        var words: [WireWord] {
            utterances.values.flatMap(\.words).sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
        }

        var errorSummary: String {
            errors.map { "\($0.code.rawValue): \($0.message)" }.joined(separator: "; ")
        }
    }

    private let state = Mutex(State())
    private let decoder = ServerMessageDecoder()
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    var current: State { state.withLock { $0 } }

    func received(_ text: String) {
        let message: ServerMessage
        do {
            message = try decoder.decode(text)
        } catch {
            // The server's own encoder wrote it: a message this cannot read is a bug, logged, not fatal.
            logger.error("test recording: unreadable server message", metadata: ["error": "\(error.code.rawValue): \(error.message)"])
            return
        }
        state.withLock { state in
            switch message {
            case .session(let info): state.session = state.session ?? info
            case .transcript(let update):
                for id in update.removed { state.utterances[id] = nil }
                for utterance in update.upserted { state.utterances[utterance.id] = utterance }
            case .speakers: break
            case .error(let error): state.errors.append(error)
            case .stats(let stats): state.stats = stats
            }
        }
    }

    func closed(code: UInt16?, reason: String) {
        state.withLock { state in
            if state.close == nil { state.close = (code, reason) }
        }
    }
}
