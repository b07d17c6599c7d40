import Synchronization
import WebSocketTransport

/// Why a session stopped reading its socket. Reading resumes when no reason is left.
enum ReceivePauseReason: Hashable, Sendable {
    /// Received frames wait for the session's queue (or for its start) beyond the input limit.
    case input
    /// The provider or the speech recogniser has too much audio in flight.
    case analysis
    /// Too many of the session's store steps await their commit.
    case store
    /// Too many bytes wait to be written to the client.
    case outbound
    /// The server is stopping: the session stores what it has and closes.
    case stopping
}

/// The one place that turns a session's pause reasons into `setReceivingPaused` calls. The service
/// thread (input) and the session's queue (the rest) both pause and resume, so the transition and
/// the transport call happen under one lock: calls cannot overtake each other and leave a socket
/// paused with no reason left (the transport applies them in the order they are made).
final class ReceiveGate: Sendable {
    private let reasons = Mutex<Set<ReceivePauseReason>>([])
    private let transport: any SessionTransport
    private let connection: ConnectionID

    init(transport: any SessionTransport, connection: ConnectionID) {
        self.transport = transport
        self.connection = connection
    }

    /// Adds a reason; the first one pauses reading.
    func pause(_ reason: ReceivePauseReason) {
        reasons.withLock { reasons in
            guard reasons.insert(reason).inserted, reasons.count == 1 else { return }
            transport.setReceivingPaused(true, for: connection)
        }
    }

    /// Removes a reason; the last one resumes reading. Returns true when reading resumed.
    @discardableResult
    func resume(_ reason: ReceivePauseReason) -> Bool {
        reasons.withLock { reasons in
            guard reasons.remove(reason) != nil, reasons.isEmpty else { return false }
            transport.setReceivingPaused(false, for: connection)
            return true
        }
    }

    func isPaused(for reason: ReceivePauseReason) -> Bool { reasons.withLock { $0.contains(reason) } }

    var isPaused: Bool { reasons.withLock { !$0.isEmpty } }
}
