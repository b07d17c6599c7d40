import PluginHost
import Synchronization

/// A push waiting in its instance's mailbox, as a batch item, with what the worker's backlog needs.
struct PendingPush {
    var instance: WorkerInstance
    var samples: [Float]
    /// The server's CLOCK_MONOTONIC stamp when the audio arrived.
    var arrivedSeconds: Double
    /// Whether its session's audio arrives at real-time pace (`ArrivalPace`) when it was read.
    var isRealTime: Bool
}

/// The plugins' `backlog_seconds` (ABI revision 5): how long audio of real-time sessions waited between
/// reaching the server and reaching the plugin (server queue, socket, mailbox). Pushes of sessions sent
/// faster than real time do not count: they wait behind their own audio. When only such sessions have
/// run for `staleSeconds`, the backlog reads 0 again. Any thread.
final class WorkerBacklog: Sendable {
    static let staleSeconds = 2.0
    private let registry: PluginRegistry
    /// When a real-time push last set the backlog.
    private let lastRealTimeNote = Mutex(-Double.infinity)

    init(registry: PluginRegistry) {
        self.registry = registry
    }

    /// The pushes about to run (one, or a batch).
    func note(_ pushes: [PendingPush]) {
        let now = MonotonicClock.seconds
        if let earliest = pushes.filter(\.isRealTime).map(\.arrivedSeconds).min() {
            lastRealTimeNote.withLock { $0 = now }
            registry.noteBacklog(seconds: now - earliest)
        } else if lastRealTimeNote.withLock({ now - $0 > Self.staleSeconds }) {
            registry.noteBacklog(seconds: 0)
        }
    }
}
