import Dispatch
import Foundation
import Logging
import PostgresClient
import SpeakerSyncStore
import Synchronization

/// This server's part in the fleet (docs/deployment.md, "A fleet"), beside the lease renewal that
/// `PostgresBackend` runs:
/// - a watchdog that gives every session up the moment this server's lease may have lapsed (the
///   fleet may claim its conversations then; the fence refuses anything they would still write),
///   and refuses new ones until the lease is renewed;
/// - a listener on `speakersync_fleet` that hands a conversation over when another server asks,
///   and applies renames and merges other servers received for its sessions (`RoutedSpeakerChange`);
/// - a publisher of its sessions' figures, for every server's `GET /v1/sessions`.
final class FleetCoordinator: @unchecked Sendable { // `timers` is written once in init; Dispatch sources are thread-safe to cancel
    private let lease: ServerLease
    private let leases: ConversationLeases
    private let config: FleetConfig
    private let logger: Logger
    private let listener: ChannelListener
    private var timers: [any DispatchSourceTimer] = []
    private let lapsed = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "speakersync.fleet")

    init(lease: ServerLease, leases: ConversationLeases, config: FleetConfig, connectionString: String,
         sessions: SessionManager, readiness: ReadinessProbe, logger: Logger) {
        self.lease = lease
        self.leases = leases
        self.config = config
        self.logger = logger
        let instance = lease.instance
        listener = ChannelListener(channel: ConversationLeases.channel, connectionString: connectionString, logger: logger) {
            [weak sessions, leases, logger] event in
            guard case .notified(let notifications) = event, let sessions else { return }
            for notification in notifications {
                guard let request = FleetRequest(payload: notification.payload), request.holder == instance else { continue }
                switch request {
                case .command(let id, _):
                    RoutedSpeakerChange.handle(id: id, leases: leases, sessions: sessions, logger: logger)
                case .handover(let conversationID, _):
                    logger.info("another server resumes a conversation of this one; handing it over",
                                metadata: ["conversation": "\(conversationID)"])
                    if !sessions.handOverToFleet(conversationID: conversationID) {
                        // No session here runs it (one ended without releasing: PostgreSQL was away).
                        do { try leases.releaseIdle(conversationID: conversationID) } catch {
                            logger.warning("idle conversation lease not released", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }
        start(sessions: sessions, readiness: readiness)
    }

    private func start(sessions: SessionManager, readiness: ReadinessProbe) {
        listener.start()
        let watchdog = DispatchSource.makeTimerSource(queue: queue)
        watchdog.schedule(deadline: .now() + 0.25, repeating: 0.25, leeway: .milliseconds(50))
        watchdog.setEventHandler { [weak self, weak sessions] in
            guard let self, let sessions else { return }
            // Lapsed with peers: they may claim this server's conversations, and its devices should
            // go to them. Alone, it keeps its sessions through the outage (`peersAtLastRenewal`).
            let nowLapsed = lease.remainingSeconds <= 0 && lease.peersAtLastRenewal > 0
            guard lapsed.exchange(nowLapsed, ordering: .relaxed) != nowLapsed else { return }
            if nowLapsed {
                logger.error("fleet lease lapsed (PostgreSQL unreachable or this server was paused); giving up every session",
                             metadata: ["lease_seconds": "\(config.leaseSeconds)", "peers": "\(lease.peersAtLastRenewal)"])
            } else {
                logger.notice("fleet lease renewed; taking sessions again")
            }
            readiness.setLeaseLapsed(nowLapsed)
            sessions.setLeaseLapsed(nowLapsed)
        }
        let publisher = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "speakersync.fleet.publish"))
        publisher.schedule(deadline: .now() + config.publishSeconds, repeating: config.publishSeconds, leeway: .milliseconds(200))
        publisher.setEventHandler { [weak self, weak sessions] in
            // Only other servers read what is published (each lists its own sessions from memory): a
            // server alone on its database skips the snapshots and the write. A server that joins is
            // seen at the next renewal, so its list has this one's sessions a few seconds later.
            guard let self, let sessions, lease.peersAtLastRenewal > 0 else { return }
            let done = DispatchSemaphore(value: 0)
            let collected = Mutex<[LiveSessionSnapshot]>([])
            sessions.liveSessions(visibleTo: .admin(keyID: "fleet")) { snapshots in
                collected.withLock { $0 = snapshots }
                done.signal()
            }
            guard done.wait(timeout: .now() + config.publishSeconds) == .success else { return }
            let published = collected.withLock { $0 }.compactMap { snapshot -> (conversationID: String, epoch: Int64, json: String)? in
                guard let fence = snapshot.fence,
                      let data = try? JSONSerialization.data(withJSONObject: snapshot.jsonObject(), options: [.sortedKeys]) else { return nil }
                return (snapshot.conversationID, fence.epoch, String(decoding: data, as: UTF8.self))
            }
            do { try leases.publish(published) } catch {
                logger.debug("session figures not published", metadata: ["error": "\(error)"])
            }
        }
        watchdog.resume()
        publisher.resume()
        timers = [watchdog, publisher]
    }

    func stop() {
        for timer in timers { timer.cancel() }
        listener.stop()
    }
}
