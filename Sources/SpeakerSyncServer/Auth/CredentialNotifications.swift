import Foundation
import Logging
import PostgresClient
import Synchronization

/// Listens on `speakersync_credentials` (schema/0009) and reloads the credentials whenever any server
/// sharing the database changes one, so a revocation elsewhere takes effect here at once rather than at
/// the next periodic read (`CredentialService.startRefreshing`, kept as the fallback).
///
/// One thread with one connection of its own, as LISTEN needs a session that stays. Every LISTEN, the
/// first included, is followed by a reload: a change committed between the server's start-up read and
/// the first LISTEN, or while a lost connection was reopened (1 s, 2 s, … up to 30 s apart), sent its
/// notification to no one.
final class CredentialNotifications: Sendable {
    static let channel = "speakersync_credentials"

    private let connectionString: String
    private let reload: @Sendable () -> Void
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// `reload` runs on the listener's thread after each batch of notifications.
    init(connectionString: String, logger: Logger, reload: @escaping @Sendable () -> Void) {
        self.connectionString = connectionString
        self.logger = logger
        self.reload = reload
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "speakersync.credential-notifications"
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
                    try opened.listen(Self.channel)
                    connection = opened
                    backoffSeconds = 1
                    // Whatever changed while no one listened: before this first LISTEN (the server read
                    // its credentials at start, and a change committed in between would otherwise wait
                    // for the periodic re-read) or while the connection was lost.
                    reload()
                }
                // A short wait, so `stop` (every server's shutdown, every test server's) returns at once.
                if try !connection!.notifications(timeoutSeconds: 0.25).isEmpty { reload() }
            } catch {
                connection = nil
                logger.warning("credential notifications: connection lost; retrying",
                               metadata: ["error": "\(error)", "retry_seconds": "\(backoffSeconds)"])
                let until = Date().addingTimeInterval(backoffSeconds)
                while !stopped.load(ordering: .relaxed), Date() < until { Thread.sleep(forTimeInterval: 0.1) }
                backoffSeconds = min(30, backoffSeconds * 2)
            }
        }
    }
}
