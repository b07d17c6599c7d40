import Foundation
import SessionProtocol
import Synchronization
import WebSocketTransport

/// The transport of one Deepgram-dialect connection (docs/deepgram.md): the session runs as any other
/// and sends its own messages; this turns each into Deepgram's (`DeepgramResults`) before it goes out.
/// Every other call passes to the server's transport unchanged.
final class DeepgramSessionTransport: SessionTransport {
    private let inner: any SessionTransport
    /// Translation and the sends it produces happen under this lock, so the session's queue and the
    /// service thread (a client's `Finalize`) cannot interleave their messages out of order.
    private let results: Mutex<DeepgramResults>

    init(inner: any SessionTransport, options: DeepgramOptions, createdAt: Date = Date()) {
        self.inner = inner
        results = Mutex(DeepgramResults(options: options, createdAt: ISO8601DateFormatter().string(from: createdAt)))
    }

    func send(text: String, to connection: ConnectionID) {
        // The session's own messages are written by ServerMessageEncoder, which this decoder reads back.
        guard let message = try? ServerMessageDecoder().decode(text) else { return }
        results.withLock { results in
            for translated in results.translate(message) { inner.send(text: translated, to: connection) }
        }
    }

    /// The client's `Finalize`: what is held back goes out as final now.
    func flush(_ connection: ConnectionID) {
        results.withLock { results in
            for translated in results.flush(fromFinalize: true) { inner.send(text: translated, to: connection) }
        }
    }

    /// A message the dialect does not take: a Deepgram `Error`, and the stream goes on.
    func refuse(_ connection: ConnectionID, code: String, message: String) {
        results.withLock { _ in inner.send(text: DeepgramResults.errorText(code: code, message: message), to: connection) }
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        inner.close(connection, code: code, reason: reason)
    }

    func setReceivingPaused(_ paused: Bool, for connection: ConnectionID) {
        inner.setReceivingPaused(paused, for: connection)
    }

    func queuedBytes(for connection: ConnectionID) -> Int { inner.queuedBytes(for: connection) }

    func closeDiscardingQueued(_ connection: ConnectionID, code: UInt16, reason: String) {
        inner.closeDiscardingQueued(connection, code: code, reason: reason)
    }
}
