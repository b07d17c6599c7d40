import Foundation
import ProviderIsolation
import SessionProtocol
import SpeechRecognition
import TranscriptMerge
import WebSocketTransport

/// Everything `SpeakerSyncApplication` can be told; `.default` is what `speakersync serve` uses.
public struct ServerConfig: Sendable {
    public var host: String
    /// 0 picks a free port (tests, benchmarks, the demo).
    public var port: Int
    /// A libpq connection string or URL. nil: run an embedded cluster under `dataDirectory`.
    public var databaseURL: String?
    public var dataDirectory: String
    /// Provider plugins folder; nil: SPEAKERSYNC_PLUGINS, else the executable's folder.
    public var pluginsDirectory: String?
    /// Migrations folder; nil: SPEAKERSYNC_SCHEMA_DIR, else `schema/` found above the executable.
    public var schemaDirectory: String?
    public var merge: MergeConfig
    public var session: SessionConfig
    /// Largest WebSocket message accepted (bigger ones get `frame_too_large`).
    public var maxMessageBytes: Int
    /// Where provider plugins run: worker processes (`process`, the default; `session`) or this process.
    public var providerIsolation: ProviderIsolationConfig
    /// The operator's provider configuration file (model paths, keys): `serve --provider-config`, else
    /// SPEAKERSYNC_PROVIDER_CONFIG; nil for none.
    public var providerConfigPath: String? = ProcessInfo.processInfo.environment["SPEAKERSYNC_PROVIDER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
    /// Credentials and per-device limits (docs/security.md).
    public var access: AccessConfig = .default
    /// Largest HTTP request body (an enrolment WAV: 120 s of 16 kHz 16-bit mono is 3.8 MB); bigger
    /// ones get 413 `body_too_large` before they are read.
    public var maxHTTPBodyBytes: Int = 8 << 20
    /// Connections served at once (503 `server_busy` beyond).
    public var maxConnections: Int = 1024
    /// Connections one client address may hold, and HTTP requests one credential may have in flight
    /// (`WebSocketServerConfig`; 0: no cap).
    public var maxConnectionsPerAddress: Int = WebSocketServerConfig.default.maxConnectionsPerAddress
    public var maxRequestsInFlightPerCredential: Int = WebSocketServerConfig.default.maxRequestsInFlightPerCredential
    /// Leases and the fleet's session registry (several servers on one database).
    public var fleet: FleetConfig = .default
    /// What one device may hold of the re-diarization and test-recording pools.
    public var jobShares: JobShareConfig = .default
    /// Seconds a new connection has to send a complete request: idle unauthenticated sockets end then.
    public var handshakeTimeoutSeconds: Int = 10
    /// HTTP request bodies: at most this long in all, and at least this fast over each window, else
    /// 408 `request_timeout` (WebSocketServerConfig documents them).
    public var bodyDeadlineSeconds: Int = WebSocketServerConfig.default.bodyDeadlineSeconds
    public var minimumBodyBytesPerSecond: Int = WebSocketServerConfig.default.minimumBodyBytesPerSecond
    public var bodyRateWindowSeconds: Int = WebSocketServerConfig.default.bodyRateWindowSeconds
    /// PEM certificate and private key: both set, the port serves wss:// and https:// only; both nil,
    /// plaintext. One without the other is refused by `start()` (`ServerError.tlsIncomplete`).
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?

    /// The PocketSphinx model for `asr: "server"` sessions (loaded at the first such session, shared
    /// by all); nil turns server-side recognition off (such a start is `asr_unavailable`).
    public var speechRecognizer: RecognizerConfig? = .default
    /// PocketSphinx decoders at most (each holds its own copy of the model, tens of MB): utterances of
    /// more sessions than this wait for one, on their session's recogniser queue.
    public var maxSpeechDecoders: Int = ProcessInfo.processInfo.activeProcessorCount

    /// Stored audio (`store_audio`) older than this many days is deleted, hourly; 0 keeps it until
    /// its conversation is deleted.
    public var audioRetentionDays: Double = 30
    /// What one session may hold in memory, how long a start may wait for PostgreSQL, and when a
    /// client that does not read is cut off.
    public var sessionLimits: SessionLimits = .default
    /// How long a stopping server gives its sessions to store what they have and close (1001)
    /// before it stops listening regardless.
    public var shutdownGraceSeconds: Double = 20

    /// When another process owns the embedded cluster under `dataDirectory` (holds its lock):
    /// `.refuse` to start (`ServerError.clusterInUse`, what `serve` does) or `.attach` to it as a
    /// client that never stops it (`demo`, `eval`). Either way no process stops a cluster it did not start.
    public var embeddedClusterInUse: EmbeddedClusterInUse = .refuse

    /// Whether the server speaks TLS (both files configured).
    public var isTLS: Bool { tlsCertificatePath != nil && tlsPrivateKeyPath != nil }

    public static let `default` = ServerConfig(
        host: "127.0.0.1", port: 8080, databaseURL: nil, dataDirectory: ResourceLocator.defaultDataDirectory(),
        pluginsDirectory: nil, schemaDirectory: nil, merge: .default, session: .default,
        maxMessageBytes: SessionConfig.default.maxTextFrameBytes, providerIsolation: .default
    )
}

/// What a server does when another process owns the embedded cluster it would use.
public enum EmbeddedClusterInUse: Sendable {
    case refuse
    case attach
}

/// Finds the folders the server needs without depending on the working directory.
public enum ResourceLocator {
    /// The running executable (a test bundle when under `swift test`).
    public static var executableURL: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    }

    public static func defaultDataDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["SPEAKERSYNC_DATA_DIR"], !dir.isEmpty { return dir }
        // Root runs PostgreSQL as an unprivileged user, which cannot enter /root: use /var/lib.
        if geteuid() == 0 { return "/var/lib/speakersync" }
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.local/share")
        return base + "/speakersync"
    }

    public static func pluginsDirectory(_ configured: String?) -> String {
        if let configured { return configured }
        if let dir = ProcessInfo.processInfo.environment["SPEAKERSYNC_PLUGINS"], !dir.isEmpty { return dir }
        return executableURL.deletingLastPathComponent().path
    }

    public static func schemaDirectory(_ configured: String?) throws -> URL {
        if let configured { return URL(fileURLWithPath: configured) }
        if let dir = ProcessInfo.processInfo.environment["SPEAKERSYNC_SCHEMA_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        var folder = executableURL.deletingLastPathComponent()
        for _ in 0..<8 {
            let candidate = folder.appendingPathComponent("schema")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("0001_initial.sql").path) {
                return candidate
            }
            folder.deleteLastPathComponent()
        }
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("schema")
        if FileManager.default.fileExists(atPath: local.path) { return local }
        throw ServerError(code: .schemaNotFound, message: "cannot find the schema/ migrations folder; set SPEAKERSYNC_SCHEMA_DIR")
    }
}

/// A failure to start or run the server, with a stable code.
public struct ServerError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case schemaNotFound = "schema_not_found"
        case databaseUnavailable = "database_unavailable"
        case listenFailed = "listen_failed"
        /// A setting that would expose the server: `--auth off` off loopback, a short admin key.
        case insecureConfig = "insecure_config"
        /// Only one of `tlsCertificatePath` / `tlsPrivateKeyPath` was set.
        case tlsIncomplete = "tls_incomplete"
        /// Another process owns the embedded PostgreSQL in the data folder (and this one may not share it).
        case clusterInUse = "cluster_in_use"
    }
    public var code: Code
    public var message: String
    public var description: String { "\(code.rawValue): \(message)" }
}
