import ArgumentParser
import Foundation
import ProviderIsolation
import SpeakerSyncServer

/// Options shared by commands that run a server (serve, demo).
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (0.0.0.0 for every interface).")
    var host: String = "127.0.0.1"

    @Option(help: "Port for WebSocket and HTTP (0 picks a free one).")
    var port: Int = 8080

    @Option(name: .customLong("database-url"), help: "PostgreSQL URL; without it (and without DATABASE_URL) the server runs a private cluster under --data-dir.")
    var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "Folder for the embedded PostgreSQL cluster.")
    var dataDirectory: String?

    @Option(name: .customLong("plugins"), help: "Folder of provider plugins (*.so). Default: SPEAKERSYNC_PLUGINS, else beside the executable.")
    var pluginsDirectory: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp(LogLevelOption.help, valueName: "level"))
    var logLevel: LogLevelOption = .info

    @Option(name: .customLong("provider-isolation"), help: ArgumentHelp(
        "Where providers run: process (one worker process per plugin file; default), session (one per session) or none (in the server: benchmarks, debugging).",
        valueName: "mode"))
    var providerIsolation: ProviderIsolationMode = ProviderIsolationMode(rawValue: ProcessInfo.processInfo.environment["SPEAKERSYNC_PROVIDER_ISOLATION"] ?? "") ?? ProviderIsolationConfig.default.mode

    @Option(name: .customLong("provider-memory-limit-mb"), help: "Memory limit of each provider worker in MiB (RLIMIT_DATA); 0 for none.")
    var providerMemoryLimitMegabytes: UInt64 = (ProviderIsolationConfig.default.memoryLimitBytes ?? 0) >> 20

    @Option(name: .customLong("provider-deadline"), help: ArgumentHelp(
        "Watchdog deadline of a provider call, repeatable: load=60, create=30, push=10, finalize=120, embed=60 (seconds).",
        valueName: "call=seconds"))
    var providerDeadlines: [String] = []

    @Option(name: .customLong("provider-config"), help: ArgumentHelp(
        "JSON file of provider settings keyed by provider id (model paths, access keys); default SPEAKERSYNC_PROVIDER_CONFIG. See docs/plugins.md.",
        valueName: "file"))
    var providerConfig: String?

    @Option(name: .customLong("provider-nice"), help: "How much lower than the server provider workers run (nice, 0-19).")
    var providerNice: Int32 = ProviderIsolationConfig.default.niceIncrement

    @Option(name: .customLong("load-shedding"), help: ArgumentHelp(
        "on (default): provider workers tell plugins how long real-time audio waited, and speakerkit embeds fewer frames while it is behind (labels on time, coarser; final labels re-embed up to 120 s of what was skipped); off: labels wait for every frame. See docs/benchmarks.md.",
        valueName: "on|off"))
    var loadShedding: String = ProviderIsolationConfig.default.reportsBacklog ? "on" : "off"

    @Option(name: .customLong("auth"), help: ArgumentHelp(
        "required (device tokens or the admin key on every route but /healthz; default) or off (everyone is admin; loopback only).",
        valueName: "mode"))
    var auth: AccessConfig.Mode = .required

    @Option(name: .customLong("admin-key-file"), help: ArgumentHelp("Where a generated admin key is written (default: <data dir>.admin-key).", valueName: "file"))
    var adminKeyFile: String?

    @Flag(name: .customLong("reset-admin-key"), help: "Revoke the stored admin keys and print a new one (a lost key).")
    var resetAdminKey = false

    @Option(name: .customLong("max-connections"), help: "Connections served at once (503 server_busy beyond).")
    var maxConnections: Int = ServerConfig.default.maxConnections

    @Option(name: .customLong("max-connections-per-device"), help: "WebSocket connections one device may hold (429 beyond).")
    var maxConnectionsPerDevice: Int = AccessConfig.default.maxConnectionsPerDevice

    @Option(name: .customLong("max-sessions-per-device"), help: "Sessions one device may run at once (too_many_sessions, close 4029, beyond).")
    var maxSessionsPerDevice: Int = AccessConfig.default.maxSessionsPerDevice

    @Option(name: .customLong("max-connections-per-address"), help: "Connections one client address may hold (429 too_many_connections beyond; 0: no cap). Behind a reverse proxy, raise it or set 0.")
    var maxConnectionsPerAddress: Int = ServerConfig.default.maxConnectionsPerAddress

    @Option(name: .customLong("max-requests-in-flight"), help: "HTTP requests one credential may have in flight at once (429 too_many_requests_in_flight beyond; 0: no cap).")
    var maxRequestsInFlight: Int = ServerConfig.default.maxRequestsInFlightPerCredential

    @Option(name: .customLong("max-jobs-per-device"), help: "Re-diarization jobs of one device's conversations waiting or running at once (429 device_share_used beyond; the admin key is not held to it).")
    var maxJobsPerDevice: Int = JobShareConfig.default.rediarizationsPerDevice

    @Option(name: .customLong("max-test-recordings-per-device"), help: "Test recordings one device may run at once (429 device_share_used beyond; the admin key is not held to it).")
    var maxTestRecordingsPerDevice: Int = JobShareConfig.default.testRecordingsPerDevice

    @Option(name: .customLong("audio-retention-days"), help: "Delete audio kept by store_audio sessions after this many days (0: keep it until its conversation is deleted).")
    var audioRetentionDays: Double = ServerConfig.default.audioRetentionDays

    @Option(name: .customLong("audio-quota-hours"), help: "Audio one device may keep stored (store_audio) over all its conversations; beyond it sessions go on without storing audio (audio_not_stored). 0: no quota.")
    var audioQuotaHours: Double = SessionLimits.default.storedAudioQuotaSecondsPerDevice / 3600

    @Option(name: .customLong("min-free-disk-mib"), help: "Free space the embedded cluster's disk keeps: below it store_audio is not honoured (audio_not_stored). 0: no watermark.")
    var minimumFreeDiskMebibytes: Int64 = SessionLimits.default.minimumFreeDiskBytes >> 20

    @Option(name: .customLong("max-conversation-words"), help: "Words one conversation may hold; beyond, words messages are refused (too_many_words). 0: no limit.")
    var maxConversationWords: Int = SessionLimits.default.maxConversationWords

    @Option(name: .customLong("lease-seconds"), help: "Fleet lease: a server that cannot renew its lease in PostgreSQL for this long gives up its sessions (1001, resumable) and other servers may take their conversations over. Renewed every quarter of it.")
    var leaseSeconds: Double = FleetConfig.default.leaseSeconds

    @Option(name: .customLong("max-body-bytes"), help: "Largest HTTP request body, e.g. an enrolment WAV (413 body_too_large beyond).")
    var maxBodyBytes: Int = ServerConfig.default.maxHTTPBodyBytes

    @Option(name: .customLong("requests-per-second"), help: "Requests per second per credential (429 rate_limited with Retry-After beyond); 0 for no limit.")
    var requestsPerSecond: Double = AccessConfig.default.requestsPerSecond

    @Option(name: .customLong("handshake-timeout"), help: "Seconds a new connection has to send a complete request before it is closed.")
    var handshakeTimeoutSeconds: Int = ServerConfig.default.handshakeTimeoutSeconds
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "PEM certificate (chain) to serve TLS with: the port then speaks wss:// and https:// only. Needs --tls-key.",
        valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of --tls-cert (unencrypted).", valueName: "file"))
    var tlsKey: String?

    func validate() throws {
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: give both (TLS) or neither (plaintext)")
        }
    }

    var isTLS: Bool { tlsCertificate != nil && tlsKey != nil }

    /// The WebSocket URL of a server these options start on this machine (demo, eval).
    func localListenURL(port: Int) -> String { "\(isTLS ? "wss" : "ws")://127.0.0.1:\(port)/v1/listen" }

    func makeConfig() throws -> ServerConfig {
        var config = ServerConfig.default
        config.host = host
        config.port = port
        config.databaseURL = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let dataDirectory { config.dataDirectory = dataDirectory }
        if let pluginsDirectory { config.pluginsDirectory = pluginsDirectory }
        config.providerIsolation.mode = providerIsolation
        config.providerIsolation.memoryLimitBytes = providerMemoryLimitMegabytes == 0 ? nil : providerMemoryLimitMegabytes << 20
        config.providerIsolation.niceIncrement = max(0, min(19, providerNice))
        guard loadShedding == "on" || loadShedding == "off" else {
            throw ValidationError("--load-shedding takes on or off, not '\(loadShedding)'")
        }
        config.providerIsolation.reportsBacklog = loadShedding == "on"
        config.providerIsolation.deadlines = try Self.deadlines(providerDeadlines)
        if let providerConfig { config.providerConfigPath = providerConfig }
        guard maxConnections > 0, maxConnectionsPerDevice > 0, maxSessionsPerDevice > 0, maxBodyBytes > 0,
              requestsPerSecond >= 0, handshakeTimeoutSeconds > 0, audioRetentionDays >= 0, audioQuotaHours >= 0,
              minimumFreeDiskMebibytes >= 0, maxConversationWords >= 0, maxJobsPerDevice > 0, maxTestRecordingsPerDevice > 0,
              maxConnectionsPerAddress >= 0, maxRequestsInFlight >= 0, leaseSeconds >= 1, leaseSeconds.isFinite else {
            throw ValidationError("limits must be positive (--lease-seconds at least 1; --requests-per-second, --max-connections-per-address and --max-requests-in-flight may be 0 for none)")
        }
        config.access.mode = auth
        config.access.adminKeyFile = adminKeyFile
        config.access.resetAdminKey = resetAdminKey
        config.access.maxConnectionsPerDevice = maxConnectionsPerDevice
        config.access.maxSessionsPerDevice = maxSessionsPerDevice
        config.access.requestsPerSecond = requestsPerSecond
        config.access.requestBurst = max(1, requestsPerSecond * 3)
        config.maxConnections = maxConnections
        config.maxConnectionsPerAddress = maxConnectionsPerAddress
        config.maxRequestsInFlightPerCredential = maxRequestsInFlight
        config.jobShares = JobShareConfig(rediarizationsPerDevice: maxJobsPerDevice, testRecordingsPerDevice: maxTestRecordingsPerDevice)
        config.maxHTTPBodyBytes = maxBodyBytes
        config.fleet.leaseSeconds = leaseSeconds
        config.audioRetentionDays = audioRetentionDays
        config.sessionLimits.storedAudioQuotaSecondsPerDevice = audioQuotaHours * 3600
        config.sessionLimits.minimumFreeDiskBytes = minimumFreeDiskMebibytes << 20
        config.sessionLimits.maxConversationWords = maxConversationWords
        config.handshakeTimeoutSeconds = handshakeTimeoutSeconds
        config.tlsCertificatePath = tlsCertificate
        config.tlsPrivateKeyPath = tlsKey
        return config
    }

    /// `call=seconds` pairs over the default deadlines.
    static func deadlines(_ pairs: [String]) throws -> ProviderDeadlines {
        var deadlines = ProviderDeadlines.default
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let seconds = Double(parts[1]), seconds > 0, seconds.isFinite else {
                throw ValidationError("--provider-deadline takes call=seconds (e.g. push=10), not '\(pair)'")
            }
            switch parts[0] {
            case "load": deadlines.loadSeconds = seconds
            case "create": deadlines.createSeconds = seconds
            case "push": deadlines.pushSeconds = seconds
            case "finalize": deadlines.finalizeSeconds = seconds
            case "embed": deadlines.embedVoiceSeconds = seconds
            default: throw ValidationError("--provider-deadline: unknown call '\(parts[0])' (load, create, push, finalize, embed)")
            }
        }
        return deadlines
    }
}

extension ProviderIsolationMode: ExpressibleByArgument {}
extension AccessConfig.Mode: ExpressibleByArgument {}
