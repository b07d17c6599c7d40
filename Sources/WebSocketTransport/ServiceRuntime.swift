import Foundation
import Synchronization

/// The thread-crossing half of a server or client: the mutex-protected work queue that any thread
/// may fill, the per-connection outboxes, and the service thread that owns the lws context.
///
/// Rules it enforces: lws is only called on the service thread (except `lws_cancel_service`, used to
/// wake it); other threads enqueue work and wake it; the service thread drains the queue on
/// LWS_CALLBACK_EVENT_WAIT_CANCELLED. `Command` is the server's or client's own command type.
final class ServiceRuntime<Command: Sendable>: Sendable {
    enum Phase: Sendable { case created, running, stopping, stopped }

    struct Shared: Sendable {
        var phase: Phase = .created
        var commands: [Command] = []
        /// Outboxes of the connections that can still be written to.
        var outboxes: [UInt64: Outbox] = [:]
        /// Connections whose outbox got new items since the last drain.
        var dirty: Set<UInt64> = []
        /// A cancel is already in flight; saves a pipe write per send under load.
        var wakeRequested = false
        var serviceThread: pthread_t?
    }

    let shared = Mutex(Shared())
    let context: LWSContext
    private let finished = DispatchSemaphore(value: 0)

    init(context: LWSContext) {
        self.context = context
    }

    // MARK: Any thread

    /// Queues a command and wakes the service thread. Dropped (false) once shutdown has begun.
    @discardableResult
    func enqueue(_ command: Command) -> Bool {
        shared.withLock { shared in
            guard shared.phase == .created || shared.phase == .running else { return false }
            shared.commands.append(command)
            wakeLocked(&shared)
            return true
        }
    }

    /// Appends to a connection's outbox; false when the connection is unknown, closing or gone.
    @discardableResult
    func send(_ message: WebSocketMessage, to id: UInt64) -> Bool {
        shared.withLock { shared in
            guard shared.phase == .created || shared.phase == .running,
                  shared.outboxes[id]?.append(message) == true else { return false }
            shared.dirty.insert(id)
            wakeLocked(&shared)
            return true
        }
    }

    /// Queues a close behind everything already queued for the connection.
    @discardableResult
    func close(_ id: UInt64, code: UInt16, reason: String) -> Bool {
        shared.withLock { shared in
            guard shared.phase == .created || shared.phase == .running,
                  shared.outboxes[id]?.appendClose(code: code, reason: reason) == true else { return false }
            shared.dirty.insert(id)
            wakeLocked(&shared)
            return true
        }
    }

    /// Drops every queued item of the connection (not the message being written).
    func discardQueued(_ id: UInt64) {
        shared.withLock { shared in shared.outboxes[id]?.discardAll() }
    }

    func queuedBytes(for id: UInt64) -> Int {
        shared.withLock { $0.outboxes[id]?.queuedBytes ?? 0 }
    }

    private func wakeLocked(_ shared: inout Shared) {
        guard !shared.wakeRequested else { return }
        shared.wakeRequested = true
        // Called under the lock so the context cannot be destroyed in between (the service thread
        // flips the phase under the same lock before destroying). lws_cancel_service only writes a pipe.
        LWS.cancelService(context.pointer)
    }

    var isOnServiceThread: Bool {
        shared.withLock { shared in shared.serviceThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    // MARK: Lifecycle

    /// Spawns the service thread. `keepAlive` (the core reached through `lws_context_user`) is held
    /// by the thread until the context is destroyed, so callbacks never see a freed object.
    func start(name: String, keepAlive: AnyObject & Sendable) throws {
        try shared.withLock { shared in
            switch shared.phase {
            case .created: shared.phase = .running
            case .running: throw TransportError(.alreadyStarted, "\(name) is already running")
            case .stopping, .stopped: throw TransportError(.shutDown, "\(name) was shut down")
            }
        }
        let thread = Thread { [self] in
            self.shared.withLock { $0.serviceThread = pthread_self() }
            self.runLoop()
            withExtendedLifetime(keepAlive) {}
            self.finished.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// A service round (one poll and the callbacks it wakes) starts at most this often: one that
    /// would begin sooner sleeps out the rest first. Why: lws 4.1's event loop is poll(), whose cost is
    /// every connection's descriptor on every round, and under many light connections each round
    /// found one or two messages (500 device sessions: 100 ms frames, about 5,000 rounds a second,
    /// 500 descriptors each). Rounds at most every millisecond carry several messages each; the server
    /// then used 39–40 % of the machine instead of 58–60 % (`speakersync-bench sessions --levels 500
    /// --seconds 20 --client-threads 4`, docs/benchmarks.md). A runtime whose rounds are further apart
    /// than this (idle, or lightly used) never sleeps; a burst pays at most a millisecond a round.
    var minimumRoundMicroseconds: UInt64 { 1_000 }

    private func runLoop() {
        var roundStart = DispatchTime.now().uptimeNanoseconds
        while shared.withLock({ $0.phase == .running }) {
            if !LWS.service(context.pointer) { break }
            let elapsed = (DispatchTime.now().uptimeNanoseconds - roundStart) / 1_000
            if elapsed < minimumRoundMicroseconds { usleep(UInt32(minimumRoundMicroseconds - elapsed)) }
            roundStart = DispatchTime.now().uptimeNanoseconds
        }
        // Flip the phase under the lock so no other thread calls lws_cancel_service from now on,
        // then destroy on this thread: close callbacks run here, like every other callback.
        shared.withLock { $0.phase = .stopping }
        context.destroy()
        shared.withLock { shared in
            shared.phase = .stopped
            shared.outboxes.removeAll()
            shared.commands.removeAll()
        }
    }

    /// Stops the service thread and destroys the context; idempotent. From the service thread itself
    /// (a handler shutting the server down) it only asks the loop to end and returns.
    func stop() {
        let action: StopAction = shared.withLock { shared in
            let onServiceThread = shared.serviceThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            switch shared.phase {
            case .created:
                shared.phase = .stopped
                return .destroyHere
            case .running:
                shared.phase = .stopping
                LWS.cancelService(context.pointer)
                return onServiceThread ? .askOnly : .wait
            case .stopping:
                return onServiceThread ? .askOnly : .wait
            case .stopped:
                return .nothing
            }
        }
        switch action {
        case .destroyHere:
            context.destroy()
        case .wait:
            finished.wait()
            finished.signal() // let any other concurrent stop() waiter through too
        case .askOnly, .nothing:
            break
        }
    }

    // MARK: Service thread only

    /// Takes everything queued since the last drain (on LWS_CALLBACK_EVENT_WAIT_CANCELLED).
    func takeWork() -> (commands: [Command], dirty: Set<UInt64>) {
        shared.withLock { shared in
            shared.wakeRequested = false
            let work = (shared.commands, shared.dirty)
            shared.commands.removeAll(keepingCapacity: true)
            shared.dirty.removeAll(keepingCapacity: true)
            return work
        }
    }

    func openOutbox(_ id: UInt64) {
        shared.withLock { $0.outboxes[id] = Outbox() }
    }

    /// The transport began the connection's closing handshake itself: drop what is queued and refuse
    /// later sends (see `Outbox.closeDiscarding`).
    func closeOutbox(_ id: UInt64) {
        shared.withLock { $0.outboxes[id]?.closeDiscarding() }
    }

    func removeOutbox(_ id: UInt64) {
        _ = shared.withLock { $0.outboxes.removeValue(forKey: id) }
    }

    /// Accounts `writtenBytes` as sent and, when `takeNext`, pops the next item.
    /// Returns the item and whether more is queued after it.
    func popOutgoing(_ id: UInt64, writtenBytes: Int, takeNext: Bool) -> (item: Outbox.Item?, moreQueued: Bool) {
        shared.withLock { shared in
            guard var outbox = shared.outboxes[id] else { return (nil, false) }
            outbox.queuedBytes -= writtenBytes
            let item = takeNext ? outbox.popFirst() : nil
            let more = !outbox.isEmpty
            shared.outboxes[id] = outbox
            return (item, more)
        }
    }
}

private enum StopAction { case nothing, destroyHere, wait, askOnly }
