import Logging
import Synchronization
import WebSocketTransport

/// Routes WebSocket events from the lws service thread to the session of each connection.
/// It never blocks: every call only looks up the runner and enqueues onto the runner's queue.
final class SessionManager: WebSocketHandler, Sendable {
    private let runners = Mutex<[ConnectionID: SessionRunner]>([:])
    private let environment: Mutex<SessionEnvironment?> = Mutex(nil)

    /// Set once the server has bound its transport (the transport needs this handler first).
    func bind(_ environment: SessionEnvironment) {
        self.environment.withLock { $0 = environment }
    }

    func opened(_ connection: ConnectionID, request: UpgradeRequest) {
        guard let environment = environment.withLock({ $0 }) else { return }
        let runner = SessionRunner(connection: connection, environment: environment)
        runners.withLock { $0[connection] = runner }
        runner.opened(request)
    }

    func received(_ connection: ConnectionID, message: WebSocketMessage) {
        runners.withLock { $0[connection] }?.received(message)
    }

    func rejected(_ connection: ConnectionID, reason: WebSocketRejection) {
        guard let runner = runners.withLock({ $0[connection] }) else { return }
        switch reason {
        case .messageTooLarge(let byteCount, _):
            runner.rejected(byteCount: byteCount)
        }
    }

    func closed(_ connection: ConnectionID, code: UInt16?) {
        runners.withLock { $0.removeValue(forKey: connection) }?.closed()
    }

    var connectionCount: Int { runners.withLock { $0.count } }
}
