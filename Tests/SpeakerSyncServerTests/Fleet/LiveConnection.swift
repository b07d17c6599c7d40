import Foundation
import Synchronization
import TestSupport
import WebSocketTransport

/// A raw device connection whose messages are collected as they arrive, so a test can act in the
/// middle of a session (wait for an acknowledgement, then open a second connection elsewhere).
final class LiveConnection: Sendable {
    let connection: WebSocketClientConnection
    private let received = Mutex(SessionRecording())
    private let closed = Mutex(false)

    init(_ connection: WebSocketClientConnection) {
        self.connection = connection
        let events = connection.events
        Task { [self] in
            for await event in events {
                switch event {
                case .message(.text(let text)): received.withLock { $0.texts.append(text) }
                case .disconnected(let code, let reason):
                    received.withLock {
                        $0.closeCode = code
                        $0.closeReason = reason
                    }
                    closed.withLock { $0 = true }
                    return
                default: continue
                }
            }
            closed.withLock { $0 = true }
        }
    }

    func send(_ text: String) { connection.send(.text(text)) }
    func send(_ bytes: [UInt8]) { connection.send(.binary(bytes)) }

    var recording: SessionRecording { received.withLock { $0 } }
    var isClosed: Bool { closed.withLock { $0 } }

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
