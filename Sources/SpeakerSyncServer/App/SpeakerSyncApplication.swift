import Foundation
import Logging
import PluginHost
import PostgresClient
import SessionProtocol
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

    private struct Running: @unchecked Sendable {
        var cluster: EmbeddedPostgresCluster?
        var backend: PostgresBackend
        var server: WebSocketServer
        var plugins: PluginRegistry
        var port: Int
        var connectionString: String
    }

    public init(config: ServerConfig, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// Starts everything; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        var cluster: EmbeddedPostgresCluster?
        let connectionString: String
        if let url = config.databaseURL {
            connectionString = url
        } else {
            logger.info("no DATABASE_URL: using the embedded PostgreSQL cluster", metadata: ["data_dir": "\(config.dataDirectory)"])
            let embedded = EmbeddedPostgresCluster(dataDirectory: config.dataDirectory, logger: logger)
            connectionString = try embedded.start()
            cluster = embedded
        }
        do {
            let schema = try ResourceLocator.schemaDirectory(config.schemaDirectory)
            let backend = try PostgresBackend(connectionString: connectionString, schemaDirectory: schema, logger: logger)
            let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(config.pluginsDirectory), logger: logger)
            var sessionConfig = config.session
            sessionConfig.knownProviders = Set(plugins.providers.map(\.id))
            // New sessions that name no provider get the best one loaded: speakerkit, else the energy baseline.
            sessionConfig.defaultProvider = ["speakerkit", "energy", "none"].first { sessionConfig.knownProviders!.contains($0) }
            let manager = SessionManager()
            let api = APIHandler(reader: backend, voices: backend, plugins: plugins, defaultProvider: sessionConfig.defaultProvider, logger: logger)
            var transportConfig = WebSocketServerConfig.default
            transportConfig.host = config.host
            transportConfig.port = config.port
            transportConfig.maxMessageBytes = max(config.maxMessageBytes, sessionConfig.maxBinaryFrameBytes)
            let server = try WebSocketServer(config: transportConfig, webSocketHandler: manager, httpHandler: api, logger: logger)
            manager.bind(SessionEnvironment(
                transport: server, store: backend, plugins: plugins, claims: ConversationClaims(),
                merge: config.merge, protocolConfig: sessionConfig, serverVersion: Self.version, logger: logger
            ))
            let port = try server.start()
            state.withLock {
                $0 = Running(cluster: cluster, backend: backend, server: server, plugins: plugins, port: port, connectionString: connectionString)
            }
            logger.info("providers", metadata: [
                "loaded": "\(plugins.providers.map(\.id).joined(separator: ","))",
                "failed": "\(plugins.failures.count)",
            ])
            return port
        } catch {
            cluster?.stop()
            throw error
        }
    }

    public var port: Int? { state.withLock { $0?.port } }

    /// The libpq connection string of the database in use (for `psql` instructions and tests).
    public var databaseConnectionString: String? { state.withLock { $0?.connectionString } }

    /// Stops listening, flushes the store, stops the embedded cluster. Idempotent.
    public func shutdown() {
        guard let running = state.withLock({ value -> Running? in
            let current = value
            value = nil
            return current
        }) else { return }
        running.server.shutdown()
        running.backend.shutdown()
        running.cluster?.stop()
    }

    deinit { shutdown() }
}
