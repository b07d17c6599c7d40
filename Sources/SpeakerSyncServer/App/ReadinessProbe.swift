import Dispatch
import Foundation
import Logging
import PostgresClient
import Synchronization

/// Whether this server can serve: PostgreSQL answers, and the server is not stopping. Checked in
/// the background once a second on a connection of its own with tight deadlines, so `/readyz` and
/// `/healthz` answer from memory at once whatever PostgreSQL is doing (down, restarting, or
/// SIGSTOPped, when a blocking check would never return and a probe would declare a healthy server
/// dead).
final class ReadinessProbe: @unchecked Sendable { // `timer` is made in init, then only resumed and cancelled (Dispatch is thread-safe); the rest is a Mutex or confined to `queue`
    struct Status: Sendable, Equatable {
        var ready: Bool
        /// "ok", "unavailable", or "unknown" before the first check.
        var database: String
        var draining: Bool
        /// This server's fleet lease lapsed (it could not renew it in time): its sessions were given
        /// up, and it takes none until it renews.
        var leaseLapsed = false
    }

    /// A success older than this no longer counts (the check itself is stuck or failing).
    static let freshSeconds = 3.0
    private static let intervalSeconds = 1.0
    private static let connectionConfig = PGConnectionConfig(connectTimeoutSeconds: 2, queryTimeoutSeconds: 1)

    private struct State {
        var lastSuccess: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant?
        var draining = false
        var leaseLapsed = false
    }

    private let connectionString: String
    private let logger: Logger
    private let state = Mutex(State())
    /// The checks run here, one at a time (each bounded by the connection's deadlines).
    private let queue = DispatchQueue(label: "speakersync.readiness")
    private let timer: any DispatchSourceTimer
    /// The connection is only touched on `queue`; the Mutex above guards the timestamps.
    private let connectionBox = ConnectionBox()

    init(connectionString: String, logger: Logger) {
        self.connectionString = connectionString
        self.logger = logger
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Checks once now (so a server is ready when its start returns), then every second.
    func start() {
        queue.sync { check() }
        timer.schedule(deadline: .now() + Self.intervalSeconds, repeating: Self.intervalSeconds, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
    }

    func stop() { timer.cancel() }

    /// The server is stopping: not ready from now on, so a load balancer sends nothing new here.
    func setDraining() { state.withLock { $0.draining = true } }

    /// The fleet lease lapsed (true) or was renewed again (false).
    func setLeaseLapsed(_ lapsed: Bool) { state.withLock { $0.leaseLapsed = lapsed } }

    var status: Status {
        state.withLock { state in
            let fresh = state.lastSuccess.map { (ContinuousClock.now - $0).seconds < Self.freshSeconds } ?? false
            let failedSince = state.lastFailure.map { failure in state.lastSuccess.map { failure > $0 } ?? true } ?? false
            let database = state.lastSuccess == nil && state.lastFailure == nil ? "unknown" : (fresh && !failedSince ? "ok" : "unavailable")
            return Status(ready: database == "ok" && !state.draining && !state.leaseLapsed, database: database, draining: state.draining,
                          leaseLapsed: state.leaseLapsed)
        }
    }

    private func check() {
        do {
            let connection = try connectionBox.connection ?? PGConnection(connectionString: connectionString, config: Self.connectionConfig)
            connectionBox.connection = connection
            _ = try connection.query("SELECT 1")
            state.withLock { $0.lastSuccess = .now }
        } catch {
            if connectionBox.connection?.isConnected == false { connectionBox.connection = nil }
            let first = state.withLock { state -> Bool in
                let wasOK = state.lastFailure.map { failure in state.lastSuccess.map { $0 > failure } ?? false } ?? true
                state.lastFailure = .now
                return wasOK
            }
            if first { logger.warning("readiness: PostgreSQL does not answer", metadata: ["error": "\(error)"]) }
        }
    }
}

/// The probe's connection, confined to the probe's queue.
private final class ConnectionBox: @unchecked Sendable { // only touched on ReadinessProbe.queue
    var connection: PGConnection?
}
