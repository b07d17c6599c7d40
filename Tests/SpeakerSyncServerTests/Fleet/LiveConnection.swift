import Foundation
import Synchronization
import TestSupport
import WebSocketTransport

/// A raw device connection whose messages are collected as they arrive, so a test can act in the
/// middle of a session (wait for an acknowledgement, then open a second connection elsewhere).
///
/// Collected by a `WebSocketClientHandler` on the client's own service thread, not by a task: the
/// tests wait with blocking polls, and on a 2-core machine under the whole suite those can hold every
/// thread of the concurrency pool, so a collecting task would never run (seen in CI).
final class LiveConnection: WebSocketClientHandler {
    private let client: WebSocketClient
    private let received = Mutex(SessionRecording())
    private let closed = Atomic<Bool>(false)
    private let idLock = Mutex<ConnectionID?>(nil)

    init(client: WebSocketClient, url: String, headers: [(String, String)]) throws {
        self.client = client
        let connection = try client.connect(url: url, headers: headers, handler: self)
        idLock.withLock { $0 = connection }
    }

    func connected(_ connection: ConnectionID) {}

    func received(_ connection: ConnectionID, message: WebSocketMessage) {
        if case .text(let text) = message { received.withLock { $0.texts.append(text) } }
    }

    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) {
        received.withLock {
            $0.closeCode = code
            $0.closeReason = reason
        }
        closed.store(true, ordering: .releasing)
    }

    func send(_ text: String) { send(.text(text)) }
    func send(_ bytes: [UInt8]) { send(.binary(bytes)) }

    private func send(_ message: WebSocketMessage) {
        guard let connection = idLock.withLock({ $0 }) else { return }
        client.send(message, to: connection)
    }

    var recording: SessionRecording { received.withLock { $0 } }
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Waits (bounded) until every word of `texts` was acknowledged `stored`.
    @discardableResult
    func waitForStored(_ texts: Set<String>, seconds: Double = 60) -> Bool {
        Polling.until(seconds: seconds) { texts.isSubset(of: recording.acknowledgedWords) }
    }

    /// Waits (bounded) until the connection closed; returns its close code.
    func waitForClose(seconds: Double = 60) -> UInt16? {
        Polling.until(seconds: seconds) { isClosed }
        return recording.closeCode
    }
}
