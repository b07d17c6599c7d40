import Dispatch
import Foundation
import Logging
import SessionProtocol
import Synchronization
import WebSocketTransport

/// Routes WebSocket events from the lws service thread to the session of each connection.
/// It never blocks: every call only looks up the runner and enqueues onto the runner's queue.
final class SessionManager: WebSocketHandler, Sendable {
    // Internal, not private: SessionManager+InProcess.swift opens sessions too.
    let runners = Mutex<[ConnectionID: SessionRunner]>([:])
    let environment: Mutex<SessionEnvironment?> = Mutex(nil)
    /// Connections speaking Deepgram's dialect (docs/deepgram.md), with their translating transport.
    let deepgram = Mutex<[ConnectionID: DeepgramSessionTransport]>([:])

    /// Set once the server has bound its transport (the transport needs this handler first).
    func bind(_ environment: SessionEnvironment) {
        self.environment.withLock { $0 = environment }
    }

    /// The handshake's credential and limit check (service thread, memory only).
    func admit(_ connection: ConnectionID, request: UpgradeRequest) -> UpgradeAdmission {
        guard let environment = environment.withLock({ $0 }) else {
            return .refuse(status: 503, code: "server_starting", message: "the server is still starting", retryAfterSeconds: 2)
        }
        if draining.load(ordering: .relaxed) {
            // Another server behind the same address may take the device at once; this one is going away.
            return .refuse(status: 503, code: "server_stopping", message: "the server is stopping; retry on another or once it is back",
                           retryAfterSeconds: 5)
        }
        if leaseLapsed.load(ordering: .relaxed) {
            return .refuse(status: 503, code: "lease_lapsed",
                           message: "this server cannot reach PostgreSQL to hold its lease; retry on another or once it is back",
                           retryAfterSeconds: 2)
        }
        if DeepgramDialect.isDeepgram(query: request.query, headers: request.headers) {
            do throws(DeepgramStart.Refusal) {
                _ = try DeepgramStart(query: request.query, config: environment.protocolConfig)
            } catch {
                return .refuse(status: 400, code: error.code, message: error.message)
            }
        }
        return environment.access.admit(upgrade: request)
    }

    func opened(_ connection: ConnectionID, request: UpgradeRequest) {
        guard let environment = environment.withLock({ $0 }) else { return }
        guard case .success(let principal) = environment.access.principal(upgrade: request) else {
            // Revoked between the handshake's check and now.
            environment.transport.close(connection, code: CloseCode.credentialRevoked, reason: ProtocolErrorCode.credentialRevoked.rawValue)
            return
        }
        environment.access.connectionOpened(principal)
        var sessionEnvironment = environment
        var sessionRequest = request
        if DeepgramDialect.isDeepgram(query: request.query, headers: request.headers),
           let start = try? DeepgramStart(query: request.query, config: environment.protocolConfig) {
            // The session runs as any other on the translated query; only its messages change shape.
            let transport = DeepgramSessionTransport(inner: environment.transport, options: start.options)
            sessionEnvironment.transport = transport
            sessionRequest.query = start.query
            if principal.deviceID == nil, sessionRequest.query["device_id"] == nil {
                sessionRequest.query["device_id"] = DeepgramDialect.defaultDeviceID
            }
            deepgram.withLock { $0[connection] = transport }
        }
        let runner = SessionRunner(connection: connection, environment: sessionEnvironment, principal: principal)
        runners.withLock { $0[connection] = runner }
        runner.opened(sessionRequest)
    }

    /// Ends at once every session opened with one of these credentials (revoked or rotated away).
    func credentialsRevoked(_ principals: Set<Principal>) {
        let affected = runners.withLock { $0.values.filter { principals.contains($0.principal) } }
        for runner in affected { runner.credentialRevoked() }
    }

    func received(_ connection: ConnectionID, message: WebSocketMessage) {
        guard let runner = runners.withLock({ $0[connection] }) else { return }
        if case .text(let text) = message, let dialect = deepgram.withLock({ $0[connection] }) {
            let control = DeepgramControl(text: text)
            switch control {
            case .finalize: dialect.flush(connection)
            case .refused(let code, let message): dialect.refuse(connection, code: code, message: message)
            case .keepAlive, .closeStream: break
            }
            // Still counted as activity (the idle limit), as any frame is.
            runner.received(.text(control.sessionText ?? #"{"type":"keepalive"}"#))
            return
        }
        runner.received(message)
    }

    func rejected(_ connection: ConnectionID, reason: WebSocketRejection) {
        guard let runner = runners.withLock({ $0[connection] }) else { return }
        switch reason {
        case .messageTooLarge(let byteCount, _):
            runner.rejected(byteCount: byteCount)
        }
    }

    func closed(_ connection: ConnectionID, code: UInt16?) {
        deepgram.withLock { $0[connection] = nil }
        guard let runner = runners.withLock({ $0.removeValue(forKey: connection) }) else { return }
        environment.withLock { $0 }?.access.connectionClosed(runner.principal)
        runner.closed()
    }

    /// The server is stopping: new upgrades are refused (503, retry later), every open session
    /// stores what it has and then closes with `server_stopping` and 1001 (a session not started yet
    /// closes at once), and this waits until each has stored its last step and until the closes are
    /// written (the peers' connections are gone), at most `timeoutSeconds` in all. Returns the
    /// sessions still not done.
    func stopSessions(timeoutSeconds: Double) -> Int {
        draining.store(true, ordering: .relaxed)
        let deadline = DispatchTime.now() + timeoutSeconds
        let open = runners.withLock { Array($0.values) }
        let group = DispatchGroup()
        for runner in open {
            group.enter()
            runner.serverStopping { group.leave() }
        }
        let stored = group.wait(timeout: deadline) == .success
        // The closes go out behind each session's last messages; wait for the transport to write
        // them and the peers to answer (lws then reports each connection closed).
        while connectionCount > 0, DispatchTime.now() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        return stored ? 0 : open.filter { !$0.isReleased }.count
    }

    /// Set once the server is stopping: upgrades are refused from then on.
    let draining = Atomic<Bool>(false)
    /// Set while this server's fleet lease is lapsed (`FleetCoordinator`): upgrades are refused.
    let leaseLapsed = Atomic<Bool>(false)

    /// The fleet lease lapsed (true: every session ends, resumable elsewhere) or was renewed (false).
    func setLeaseLapsed(_ lapsed: Bool) {
        guard leaseLapsed.exchange(lapsed, ordering: .relaxed) != lapsed, lapsed else { return }
        for runner in runners.withLock({ Array($0.values) }) { runner.leaseLapsed() }
    }

    /// Another server asked for `conversationID` (its device resumed there): the session running it
    /// here stores what it has, closes with `resumed_elsewhere` and releases the lease. False when no
    /// session here runs it.
    @discardableResult
    func handOverToFleet(conversationID: String) -> Bool {
        guard let runner = runner(conversationID: conversationID) else { return false }
        runner.handOver {}
        return true
    }

    var connectionCount: Int { runners.withLock { $0.count } }

    /// The started sessions `principal` may see (a device token: its own device's), newest first.
    /// Each session answers on its own queue; `reply` runs once all have (on one of them), so no
    /// thread waits for a session.
    func liveSessions(visibleTo principal: Principal, reply: @escaping @Sendable ([LiveSessionSnapshot]) -> Void) {
        let open = runners.withLock { Array($0.values) }
        let collected = Mutex<[LiveSessionSnapshot]>([])
        let group = DispatchGroup()
        for runner in open {
            group.enter()
            runner.snapshot(includeTranscript: false) { snapshot in
                if let snapshot, principal.deviceID == nil || principal.deviceID == snapshot.deviceID {
                    collected.withLock { $0.append(snapshot) }
                }
                group.leave()
            }
        }
        group.notify(queue: .global()) {
            reply(collected.withLock { $0 }.sorted { $0.startedAt > $1.startedAt })
        }
    }

    /// The session running `conversationID` on this server, if any.
    func runner(conversationID: String) -> SessionRunner? {
        environment.withLock { $0 }?.claims.owner(of: conversationID)
    }

    /// One live conversation with its transcript, if it runs here and `principal` may see it.
    func liveSession(conversationID: String, visibleTo principal: Principal, reply: @escaping @Sendable (LiveSessionSnapshot?) -> Void) {
        guard let runner = runner(conversationID: conversationID) else { return reply(nil) }
        runner.snapshot(includeTranscript: true) { snapshot in
            guard let snapshot, principal.deviceID == nil || principal.deviceID == snapshot.deviceID else { return reply(nil) }
            reply(snapshot)
        }
    }
}
