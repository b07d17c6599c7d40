import Foundation
import Logging
import PostgresClient
import Synchronization

/// Listens on one PostgreSQL notification channel on a thread and a connection of its own (LISTEN
/// needs a session that stays): `speakersync_credentials` (schema/0009), so a credential changed on
/// any server takes effect here at once, and `speakersync_fleet` (schema/0010), where servers ask
/// each other for handovers.
///
/// Every LISTEN, the first included, is reported as `.listening` before any notification: whatever
/// was sent before it (between the server's start-up read and the first LISTEN, or while a lost
/// connection was reopened, 1 s, 2 s, … up to 30 s apart) reached no one, so the owner catches up
/// (re-reads) then.
final class ChannelListener: Sendable {
    enum Event: Sendable {
        /// LISTEN took effect (at start and after every reconnect): catch up on what may have been missed.
        case listening
        case notified([PGNotification])
    }

    let channel: String
    private let connectionString: String
    private let handle: @Sendable (Event) -> Void
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// `handle` runs on the listener's thread.
    init(channel: String, connectionString: String, logger: Logger, handle: @escaping @Sendable (Event) -> Void) {
        self.channel = channel
        self.connectionString = connectionString
        self.logger = logger
        self.handle = handle
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "speakersync.listen.\(channel)"
        thread.start()
    }

    /// Ends the thread within a quarter of a second (its wait's timeout) and waits for it.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    private func run() {
        var backoffSeconds = 1.0
        var connection: PGConnection?
        while !stopped.load(ordering: .relaxed) {
            do {
                if connection == nil {
                    let opened = try PGConnection(connectionString: connectionString, config: .interactive)
                    try opened.listen(channel)
                    connection = opened
                    backoffSeconds = 1
                    handle(.listening)
                }
                // A short wait, so `stop` (every server's shutdown, every test server's) returns at once.
                let notifications = try connection!.notifications(timeoutSeconds: 0.25)
                if !notifications.isEmpty { handle(.notified(notifications)) }
            } catch {
                connection = nil
                logger.warning("notifications: connection lost; retrying",
                               metadata: ["channel": "\(channel)", "error": "\(error)", "retry_seconds": "\(backoffSeconds)"])
                let until = Date().addingTimeInterval(backoffSeconds)
                while !stopped.load(ordering: .relaxed), Date() < until { Thread.sleep(forTimeInterval: 0.1) }
                backoffSeconds = min(30, backoffSeconds * 2)
            }
        }
    }
}
