import Foundation
import Logging
import Synchronization
@testable import WebSocketTransport

/// Logger for tests: warnings and up, so lws complaints show in the output.
func testLogger(_ label: String = "transport-test") -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .warning
    return logger
}

/// Fails the surrounding test instead of hanging forever.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

func withTimeout<T: Sendable>(_ seconds: Double = 20, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            throw TimedOut(what: what)
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// Collects the events of one client connection until it disconnects or `until` is satisfied.
func collect(_ connection: WebSocketClientConnection, until done: @escaping @Sendable ([WebSocketClientEvent]) -> Bool,
             timeout: Double = 20) async throws -> [WebSocketClientEvent] {
    try await withTimeout(timeout, "events on \(connection.id)") {
        var events: [WebSocketClientEvent] = []
        for await event in connection.events {
            events.append(event)
            if done(events) { break }
        }
        return events
    }
}

func messages(_ events: [WebSocketClientEvent]) -> [WebSocketMessage] {
    events.compactMap { if case .message(let message) = $0 { return message } else { return nil } }
}

/// A server-side handler whose behaviour is a closure per event, recording what happened.
final class ScriptedHandler: WebSocketHandler {
    struct Log {
        var opened: [(ConnectionID, UpgradeRequest)] = []
        var received: [(ConnectionID, WebSocketMessage)] = []
        var rejected: [(ConnectionID, WebSocketRejection)] = []
        var closed: [(ConnectionID, UInt16?)] = []
    }

    let log = Mutex(Log())
    private let serverBox = Mutex<WeakServer>(WeakServer())
    let onReceived: @Sendable (WebSocketServer, ConnectionID, WebSocketMessage) -> Void
    let onOpened: @Sendable (WebSocketServer, ConnectionID) -> Void
    let onRejected: @Sendable (WebSocketServer, ConnectionID, WebSocketRejection) -> Void
    let onAdmit: @Sendable (UpgradeRequest) -> UpgradeAdmission

    struct WeakServer: @unchecked Sendable { weak var server: WebSocketServer? }

    init(onOpened: @escaping @Sendable (WebSocketServer, ConnectionID) -> Void = { _, _ in },
         onReceived: @escaping @Sendable (WebSocketServer, ConnectionID, WebSocketMessage) -> Void = { server, id, message in
             server.send(message, to: id) // echo
         },
         onRejected: @escaping @Sendable (WebSocketServer, ConnectionID, WebSocketRejection) -> Void = { _, _, _ in },
         onAdmit: @escaping @Sendable (UpgradeRequest) -> UpgradeAdmission = { _ in .accept }) {
        self.onOpened = onOpened
        self.onReceived = onReceived
        self.onRejected = onRejected
        self.onAdmit = onAdmit
    }

    func admit(_ connection: ConnectionID, request: UpgradeRequest) -> UpgradeAdmission {
        onAdmit(request)
    }

    func attach(_ server: WebSocketServer) { serverBox.withLock { $0.server = server } }
    private var server: WebSocketServer? { serverBox.withLock { $0.server } }

    func opened(_ connection: ConnectionID, request: UpgradeRequest) {
        log.withLock { $0.opened.append((connection, request)) }
        if let server { onOpened(server, connection) }
    }

    func received(_ connection: ConnectionID, message: WebSocketMessage) {
        log.withLock { $0.received.append((connection, message)) }
        if let server { onReceived(server, connection, message) }
    }

    func rejected(_ connection: ConnectionID, reason: WebSocketRejection) {
        log.withLock { $0.rejected.append((connection, reason)) }
        if let server { onRejected(server, connection, reason) }
    }

    func closed(_ connection: ConnectionID, code: UInt16?) {
        log.withLock { $0.closed.append((connection, code)) }
    }
}

/// Starts a server on an ephemeral loopback port with `handler`.
func startServer(_ handler: ScriptedHandler, http: (any HTTPHandler)? = nil,
                 config: WebSocketServerConfig = .default) throws -> (WebSocketServer, Int) {
    let server = try WebSocketServer(config: config, webSocketHandler: handler, httpHandler: http, logger: testLogger())
    handler.attach(server)
    let port = try server.start()
    return (server, port)
}

/// Polls `condition` (used for server-side state reached on the service thread).
func eventually(_ what: String, timeout: Double = 20, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTimeout(timeout, what) {
        while !condition() { try await Task.sleep(nanoseconds: 5_000_000) }
    }
}
