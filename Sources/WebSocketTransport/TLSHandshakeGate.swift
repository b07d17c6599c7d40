import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps lws 4.1.6 from failing good wss:// handshakes when TLS contexts are created meanwhile.
///
/// Every `lws_create_context` with LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT takes a new OpenSSL ex-data
/// index into a process-wide variable (`openssl_websocket_private_data_index`; later lws takes it only
/// once). A client connection stores its wsi under the index current at `SSL_new`, and lws's client
/// verify callback reads it back with the index current at verification: if a TLS context (any client,
/// or a TLS server) was created in between, the lookup fails, lws logs "can't get wsi from ssl
/// privdata" and refuses the certificate. That fails closed, but spuriously. So creating a TLS context
/// waits until no client handshake is in flight, and no handshake starts while one is being created.
enum TLSHandshakeGate {
    private struct State {
        var handshakes = 0
        var creating = false
    }

    private static let state = Mutex(State())
    /// A handshake that never ends (a bug, or a context created from its own service thread) must not
    /// block context creation forever: after this long, creation goes ahead and takes the risk.
    private static let creationWaitLimit = Duration.seconds(10)

    /// Runs `body` (the context creation) once no client handshake is in flight.
    static func creatingContext<T>(_ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + creationWaitLimit
        while true {
            let acquired = state.withLock { state -> Bool in
                guard !state.creating, state.handshakes == 0 || ContinuousClock.now >= deadline else { return false }
                state.creating = true
                return true
            }
            if acquired { break }
            usleep(1000)
        }
        defer { state.withLock { $0.creating = false } }
        return try body()
    }

    /// Before a wss:// connect (service thread): waits out a context creation in progress (milliseconds).
    static func handshakeStarted() {
        while !state.withLock({ state -> Bool in
            guard !state.creating else { return false }
            state.handshakes += 1
            return true
        }) {
            usleep(200)
        }
    }

    /// Once per `handshakeStarted`, when the connection is established or gone.
    static func handshakeEnded() {
        state.withLock { $0.handshakes -= 1 }
    }
}
