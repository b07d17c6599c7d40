import Synchronization
import WebSocketTransport

/// Sessions whose device lives in this process (the console's test recordings): opened here instead
/// of by a WebSocket handshake, then fed through `received` and ended through `closed` exactly as a
/// socket's are, so they run the same `SessionRunner` (providers, merge, persistence) and show among
/// the live sessions like any other.
extension SessionManager {
    /// In-process connections count down from the top of the ID space, the transport's count up from
    /// 1: the two never meet.
    private static let inProcessConnections = Atomic<UInt64>(0)

    static func makeInProcessConnectionID() -> ConnectionID {
        ConnectionID(rawValue: UInt64.max - inProcessConnections.add(1, ordering: .relaxed).oldValue)
    }

    /// Opens `connection` for `principal`, its device's messages answered through `transport`.
    ///
    /// The credential already presented by the request that asked for the session is not presented
    /// again; the handshake's other checks still apply (`AccessGate.admit(inProcess:address:)`: the
    /// credential is still live, its rate, the device's connections), and so do a server that is
    /// starting or stopping. The session acts as `principal` (a device token: only as its device) and
    /// is closed when that credential is revoked, like a socket's. On `.accept` the caller must end
    /// the connection with `closed` once it is over, as a transport reports a socket's close.
    func openInProcess(_ connection: ConnectionID, principal: Principal, address: String?,
                       transport: any SessionTransport) -> UpgradeAdmission {
        guard var environment = environment.withLock({ $0 }) else {
            return .refuse(status: 503, code: "server_starting", message: "the server is still starting", retryAfterSeconds: 2)
        }
        if draining.load(ordering: .relaxed) {
            return .refuse(status: 503, code: "server_stopping", message: "the server is stopping", retryAfterSeconds: 5)
        }
        let admission = environment.access.admit(inProcess: principal, address: address)
        guard admission == .accept else { return admission }
        environment.access.connectionOpened(principal)
        // The session reaches its device through `transport`; everything else it shares with the others.
        environment.transport = transport
        let runner = SessionRunner(connection: connection, environment: environment, principal: principal)
        runners.withLock { $0[connection] = runner }
        runner.opened(UpgradeRequest(path: "/v1/listen", query: [:], remoteAddress: address))
        return .accept
    }
}
