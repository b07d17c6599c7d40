import Dispatch
import SessionProtocol
import Synchronization
import WebSocketTransport

/// The wire between one session and a device that lives in this process: what the session sends
/// goes to the device's `DeviceInbox` rather than a socket, and what the device sends goes to
/// `SessionManager` as a socket's frames would (`received`, and `closed` once either side closes).
///
/// Like a socket it delivers in order and off the sender's thread (the session's queue never runs
/// the device's decoding), honours the session's reading pauses (`deliver` waits while reading is
/// paused, as a device's writes wait on a socket nobody reads), and reports the close once.
final class LoopbackSessionTransport: SessionTransport {
    let connection: ConnectionID
    private let sessions: SessionManager
    private let inbox: DeviceInbox
    /// In-order delivery to the device, then the close, as a socket would bring them.
    private let delivery: DispatchQueue
    private let state = Mutex(State())

    private struct State {
        var receivingPaused = false
        var closed = false
    }

    init(connection: ConnectionID, sessions: SessionManager, inbox: DeviceInbox) {
        self.connection = connection
        self.sessions = sessions
        self.inbox = inbox
        delivery = DispatchQueue(label: "speakersync.loopback.\(connection.rawValue)")
    }

    // MARK: The session's side (SessionTransport)

    func send(text: String, to connection: ConnectionID) {
        guard connection == self.connection, !state.withLock({ $0.closed }) else { return }
        delivery.async { self.inbox.received(text) }
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        guard connection == self.connection else { return }
        end(code: code, reason: reason)
    }

    func setReceivingPaused(_ paused: Bool, for connection: ConnectionID) {
        guard connection == self.connection else { return }
        state.withLock { $0.receivingPaused = paused }
    }

    // MARK: The device's side

    /// Hands one message to the session once it reads again; false when the connection is closed.
    func deliver(_ message: WebSocketMessage) async -> Bool {
        while true {
            let (paused, closed) = state.withLock { ($0.receivingPaused, $0.closed) }
            if closed { return false }
            if !paused { break }
            try? await Task.sleep(for: .milliseconds(2))
        }
        sessions.received(connection, message: message)
        return true
    }

    /// The device closes (gives up waiting, or is cancelled): the session sees its peer gone.
    func hangUp(code: UInt16, reason: String) {
        end(code: code, reason: reason)
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// The first close from either side ends the connection: the device learns of it behind every
    /// message sent before it, then the session's manager, as a transport reports a socket's close.
    private func end(code: UInt16, reason: String) {
        let first = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            return true
        }
        guard first else { return }
        delivery.async {
            self.inbox.closed(code: code, reason: reason)
            self.sessions.closed(self.connection, code: code)
        }
    }
}
