import Foundation
import Logging
import PluginHost
import PostgresClient
import ProviderIsolation
import SessionProtocol
import SpeechRecognition
import Synchronization
import WebSocketTransport

/// The SpeakerSync server: PostgreSQL (given or embedded), migrations, plugins, and the WebSocket +
/// HTTP listener, wired together. `start()` brings everything up; `shutdown()` stops it in reverse,
/// flushing the store before the embedded cluster stops.
public final class SpeakerSyncApplication: Sendable {
    public static let version = "0.1.0"

    public let config: ServerConfig
    private let logger: Logger
    private let state = Mutex<Running?>(nil)

    /// Sendable: it lives only inside `state` (a Mutex); some members (the embedded cluster, the
    /// WebSocket server) are classes not declared Sendable that guard their own state.
    private struct Running: @unchecked Sendable {
        var cluster: EmbeddedPostgresCluster?
        var backend: PostgresBackend
        var server: WebSocketServer
        var sessions: SessionManager
        var providers: any ProviderHost
        var credentials: CredentialService
        var readiness: ReadinessProbe
        var jobs: BackgroundJobs
        var fleet: FleetCoordinator
        var port: Int
        var connectionString: String
    }

    public init(config: ServerConfig, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// The transport's TLS files, or nil for plaintext. Only one of the two paths is refused: serving
    /// plaintext when the operator asked for TLS would be the unsafe way to fail.
    static func tlsFiles(_ config: ServerConfig) throws -> TLSFiles? {
        switch (config.tlsCertificatePath, config.tlsPrivateKeyPath) {
        case let (certificate?, key?): return TLSFiles(certificatePath: certificate, privateKeyPath: key)
        case (nil, nil): return nil
        default: throw ServerError(code: .tlsIncomplete, message: "TLS needs both a certificate and a private key")
        }
    }

    /// Starts everything; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        if config.access.mode == .off, !AccessConfig.isLoopback(config.host) {
            throw ServerError(code: .insecureConfig, message: "--auth off is allowed only when listening on loopback (127.0.0.1 or ::1), not on \(config.host)")
        }
        if let key = config.access.environmentAdminKey, key.count < CredentialBook.minimumEnvironmentKeyLength {
            throw ServerError(code: .insecureConfig, message: "SPEAKERSYNC_ADMIN_KEY must be at least \(CredentialBook.minimumEnvironmentKeyLength) characters (e.g. openssl rand -hex 32)")
        }
        let tls = try Self.tlsFiles(config) // before anything starts: a half TLS config is a mistake, not plaintext
        MemoryReclaimer.configureAllocator()
        var cluster: EmbeddedPostgresCluster?
        var providerHost: (any ProviderHost)?
        let connectionString: String
        if let url = config.databaseURL {
            connectionString = url
        } else {
            logger.info("no DATABASE_URL: using the embedded PostgreSQL cluster", metadata: ["data_dir": "\(config.dataDirectory)"])
            let embedded = EmbeddedPostgresCluster(dataDirectory: config.dataDirectory, logger: logger)
            connectionString = try Self.startEmbedded(embedded, ifInUse: config.embeddedClusterInUse)
            cluster = embedded
        }
        do {
            let schema = try ResourceLocator.schemaDirectory(config.schemaDirectory)
            let metrics = ServerMetrics()
            let storeMetrics = StoreMetrics(metrics: metrics)
            let backend = try PostgresBackend(connectionString: connectionString, schemaDirectory: schema, storeObserver: storeMetrics,
                                              audioRetentionDays: config.audioRetentionDays, fleet: config.fleet,
                                              address: "\(config.host):\(config.port)", version: Self.version, logger: logger)
            storeMetrics.watchQueue(of: backend.writer)
            let pluginsDirectory = ResourceLocator.pluginsDirectory(config.pluginsDirectory)
            // Read (and so checked) here, at start. Workers never read it: each is sent its own sections.
            let fileConfiguration = try config.providerConfigPath.map { path throws(ProviderConfigurationError) in
                try ProviderConfiguration.load(path: path)
            }
            // A provider secret given in the environment travels the same way, to its own worker only.
            let providerConfiguration = (fileConfiguration ?? .empty).fillingSecrets(from: ProcessInfo.processInfo.environment)
            let plugins: any ProviderHost
            switch config.providerIsolation.mode {
            case .none:
                plugins = PluginRegistry(directory: pluginsDirectory, configuration: providerConfiguration, logger: logger)
            case .process, .session:
                var isolation = config.providerIsolation
                isolation.providerConfiguration = fileConfiguration == nil && providerConfiguration.sections.isEmpty ? nil : providerConfiguration
                plugins = try IsolatedProviderHost(directory: pluginsDirectory, config: isolation, logger: logger)
            }
            providerHost = plugins
            var sessionConfig = config.session
            sessionConfig.knownProviders = Set(plugins.providers.map(\.id))
            // New sessions that name no provider get the best one loaded: speakerkit, else the energy baseline.
            sessionConfig.defaultProvider = ["speakerkit", "energy", "none"].first { sessionConfig.knownProviders!.contains($0) }
            let manager = SessionManager()
            let credentials = CredentialService(repository: backend.repository,
                                                book: CredentialBook(environmentAdminKey: config.access.environmentAdminKey), logger: logger)
            try credentials.refresh()
            if config.access.mode == .required, config.access.environmentAdminKey == nil,
               let key = try credentials.bootstrapAdminKey(reset: config.access.resetAdminKey) {
                announce(key)
            }
            let gate = AccessGate(config: config.access, book: credentials.book)
            if config.access.mode == .off {
                logger.warning("access control is off: anyone who reaches \(config.host) acts as admin (--auth off)")
            }
            let testRecordings = TestRecordingService(queue: backend.jobs, logger: logger)
            let rediarization = DiarizationJobService(queue: backend.jobs, directory: backend, providers: plugins, merge: config.merge, logger: logger)
            let readiness = ReadinessProbe(connectionString: connectionString, logger: logger)
            readiness.start()
            var services = APIServices(reader: backend, providers: plugins)
            services.voices = backend
            services.defaultProvider = sessionConfig.defaultProvider
            services.isolation = config.providerIsolation.mode.rawValue
            services.credentials = credentials
            services.sessions = manager
            services.fleetSessions = backend
            services.testRecordings = testRecordings
            services.devices = backend
            services.labellings = backend
            services.eraser = backend
            services.rediarization = rediarization
            services.jobShares = config.jobShares
            services.merge = config.merge
            services.readiness = readiness
            let api = APIHandler(services: services, gate: gate, metrics: metrics, logger: logger)
            var transportConfig = WebSocketServerConfig.default
            transportConfig.host = config.host
            transportConfig.port = config.port
            transportConfig.maxHTTPBodyBytes = config.maxHTTPBodyBytes
            transportConfig.maxConnections = config.maxConnections
            transportConfig.handshakeTimeoutSeconds = config.handshakeTimeoutSeconds
            transportConfig.bodyDeadlineSeconds = config.bodyDeadlineSeconds
            transportConfig.minimumBodyBytesPerSecond = config.minimumBodyBytesPerSecond
            transportConfig.maxConnectionsPerAddress = config.maxConnectionsPerAddress
            transportConfig.maxRequestsInFlightPerCredential = config.maxRequestsInFlightPerCredential
            transportConfig.bodyRateWindowSeconds = config.bodyRateWindowSeconds
            transportConfig.extraSubprotocols = [PresentedCredential.subprotocol]
            transportConfig.maxMessageBytes = max(config.maxMessageBytes, sessionConfig.maxBinaryFrameBytes)
            transportConfig.tls = tls
            let server = try WebSocketServer(config: transportConfig, webSocketHandler: manager, httpHandler: api, logger: logger)
            manager.bind(SessionEnvironment(
                transport: server, store: backend, providers: plugins, claims: ConversationClaims(),
                merge: config.merge, protocolConfig: sessionConfig, serverVersion: Self.version,
                serverInstance: backend.lease.instance, logger: logger, access: gate, metrics: metrics,
                limits: Self.sessionLimits(config),
                recognizers: config.speechRecognizer.map { RecognizerPool(config: $0, maximum: config.maxSpeechDecoders, logger: logger) },
                dataDirectory: config.databaseURL == nil ? config.dataDirectory : nil
            ))
            credentials.whenRevoked { [weak manager] principals in manager?.credentialsRevoked(principals) }
            credentials.startRefreshing(every: config.access.refreshSeconds)
            credentials.startListening(connectionString: connectionString)
            let port = try server.start()
            let fleet = FleetCoordinator(lease: backend.lease, leases: backend.leases, config: config.fleet, connectionString: connectionString,
                                         sessions: manager, readiness: readiness, logger: logger)
            testRecordings.bind(manager)
            rediarization.startRunning()
            state.withLock {
                $0 = Running(cluster: cluster, backend: backend, server: server, sessions: manager, providers: plugins,
                             credentials: credentials, readiness: readiness,
                             jobs: BackgroundJobs(rediarization: rediarization, testRecordings: testRecordings), fleet: fleet, port: port,
                             connectionString: connectionString)
            }
            logger.info("providers", metadata: [
                "loaded": "\(plugins.providers.map(\.id).joined(separator: ","))",
                "failed": "\(plugins.failures.count)",
            ])
            return port
        } catch {
            providerHost?.shutdown()
            cluster?.stop()
            throw error
        }
    }

    public var port: Int? { state.withLock { $0?.port } }

    /// A resume that finds its conversation live on another server waits for the handover, or for
    /// that server's lease to lapse: the start's wait covers a whole lease.
    static func sessionLimits(_ config: ServerConfig) -> SessionLimits {
        var limits = config.sessionLimits
        limits.startStorageWaitSeconds = max(limits.startStorageWaitSeconds, config.fleet.leaseSeconds + 2)
        return limits
    }

    /// This server's number in the fleet (`server_instances`); nil when it is not running.
    public var serverInstance: Int? { state.withLock { $0?.backend.lease.instance } }

    /// The embedded cluster's owner (this process) or its client; nil with a DATABASE_URL.
    public var embeddedClusterRole: EmbeddedPostgresCluster.Role? { state.withLock { $0?.cluster?.role } }

    /// Starts (as its owner) or, with `.attach`, joins the embedded cluster. Refused, the message
    /// names the owner and the two ways on: stop it, or a database URL (its socket shares its database).
    static func startEmbedded(_ cluster: EmbeddedPostgresCluster, ifInUse: EmbeddedClusterInUse) throws -> String {
        switch ifInUse {
        case .attach:
            return try cluster.startOrAttach()
        case .refuse:
            do {
                return try cluster.start()
            } catch let inUse as ClusterInUseError {
                throw ServerError(code: .clusterInUse, message: """
                    another SpeakerSync (\(inUse.ownerDescription)) owns the embedded PostgreSQL in \(inUse.dataDirectory); \
                    stop it, or give this one --database-url (--database-url "\(inUse.connectionString)" shares that \
                    database while its owner runs) or another --data-dir
                    """)
            }
        }
    }

    /// Creates a device token (what `POST /v1/devices/{id}/tokens` does), for the demo and tests that
    /// run the server in-process. Returns the token text, shown once.
    public func createDeviceToken(deviceID: String, label: String = "") throws -> String {
        guard let credentials = state.withLock({ $0?.credentials }) else {
            throw ServerError(code: .databaseUnavailable, message: "the server is not running")
        }
        return try credentials.createToken(deviceID: deviceID, label: label).0.text
    }

    /// Shows a generated admin key once, on standard error (not through the logger, whose lines may be
    /// shipped elsewhere), and writes it to the key file for the operator.
    private func announce(_ key: Credential) {
        let path = config.access.adminKeyFile ?? AccessConfig.defaultAdminKeyFile(dataDirectory: config.dataDirectory)
        let written = CredentialService.writeKeyFile(key, path: path, logger: logger)
        var text = "\nSpeakerSync generated an admin key. It is shown once; only its SHA-256 is stored:\n\n    \(key.text)\n\n"
        if let written { text += "It is also in \(written) (mode 0600): move it somewhere safe, then delete that file.\n" }
        text += "Create a device token with:  speakersync token create --device <device-id> --admin-key-file \(written ?? "<file>")\n\n"
        FileHandle.standardError.write(Data(text.utf8))
        logger.notice("admin key generated", metadata: ["key_id": "\(key.id)", "file": "\(written ?? "none")"])
    }

    /// The libpq connection string of the database in use (for `psql` instructions and tests).
    public var databaseConnectionString: String? { state.withLock { $0?.connectionString } }

    /// Stops in order, each step once the one before is done (a deploy's SIGTERM):
    /// 1. not ready (`/readyz` 503) and new upgrades refused, so a load balancer sends nothing new;
    /// 2. every session stores what it has, then gets `server_stopping` and close 1001 (resumable);
    /// 3. the listener and its connections close;
    /// 4. the store writer drains (everything queued is committed);
    /// 5. the provider workers stop;
    /// 6. the embedded cluster stops.
    /// Each step is logged with its duration. Idempotent.
    public func shutdown() {
        guard let running = state.withLock({ value -> Running? in
            let current = value
            value = nil
            return current
        }) else { return }
        func step(_ name: String, _ body: () -> Void) {
            let started = ContinuousClock.now
            body()
            logger.info("shutdown: \(name)", metadata: ["seconds": "\(String(format: "%.2f", (ContinuousClock.now - started).seconds))"])
        }
        step("draining") {
            running.readiness.setDraining()
            running.backend.lease.markStopping()
        }
        // Before sessions and providers stop: a job would otherwise see its provider or its in-process
        // session end and record that as a failure (BackgroundJobs.shutdown re-queues or fails it).
        step("background jobs stopped") { running.jobs.shutdown() }
        step("sessions stored and closed (1001)") {
            let unfinished = running.sessions.stopSessions(timeoutSeconds: config.shutdownGraceSeconds)
            if unfinished > 0 {
                logger.warning("sessions still storing at shutdown; the next start marks them interrupted", metadata: ["sessions": "\(unfinished)"])
            }
        }
        step("listener closed") { running.server.shutdown() }
        step("store drained") {
            running.fleet.stop()
            running.credentials.stop()
            running.readiness.stop()
            running.backend.shutdown()
        }
        step("provider workers stopped") { running.providers.shutdown() }
        step("embedded PostgreSQL stopped") { running.cluster?.stop() }
    }

    deinit { shutdown() }
}
