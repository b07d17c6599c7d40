import Foundation

/// Who may connect and how much: credentials and limits (docs/security.md has the reasoning).
public struct AccessConfig: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Every route but the open ones (the probes, the console's files) and every WebSocket needs a
        /// device token or the admin key.
        case required
        /// No credentials: everyone is admin. Refused unless the server listens on loopback only.
        case off
    }

    public var mode: Mode
    /// SPEAKERSYNC_ADMIN_KEY: an admin key from the environment (never stored). Without it the server
    /// generates one at first start, stores its digest and prints it once.
    public var environmentAdminKey: String?
    /// Where a generated admin key is written (mode 0600) besides being printed once; nil:
    /// `AccessConfig.defaultAdminKeyFile(dataDirectory:)`.
    public var adminKeyFile: String? = nil
    /// Revoke the stored admin keys and generate a new one at start (a lost key).
    public var resetAdminKey = false
    /// WebSocket connections one device may hold at once (its reconnects overlap the old socket briefly).
    public var maxConnectionsPerDevice = 8
    /// Sessions (started streams) one device may run at once.
    public var maxSessionsPerDevice = 4
    /// Requests (HTTP requests and WebSocket upgrades) per second per credential, and the burst allowed.
    public var requestsPerSecond: Double = 20
    public var requestBurst: Double = 60
    /// How often the credentials are read again from PostgreSQL anyway. Changes made by another server
    /// sharing the database (revocations included) normally arrive at once through NOTIFY
    /// (`ChannelListener` on `speakersync_credentials`); this bounds how long one missed while the listener reconnected lasts.
    public var refreshSeconds: Double = 5

    /// The limits start at their defaults; set them on the value.
    public init(mode: Mode = .required,
                environmentAdminKey: String? = ProcessInfo.processInfo.environment["SPEAKERSYNC_ADMIN_KEY"].flatMap { $0.isEmpty ? nil : $0 }) {
        self.mode = mode
        self.environmentAdminKey = environmentAdminKey
    }

    public static let `default` = AccessConfig()

    /// `<data dir>.admin-key`: beside the data folder, not in it, because the embedded PostgreSQL
    /// cluster lives in the data folder and a base backup of it must not carry the admin key.
    public static func defaultAdminKeyFile(dataDirectory: String) -> String {
        var folder = dataDirectory
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder + ".admin-key"
    }

    /// True for addresses only this machine can reach: where `--auth off` is allowed. The name is
    /// resolved and every address it has must be loopback (127.0.0.0/8, ::1, or IPv4-mapped 127/8):
    /// a text test would let `127.0.0.1.evil.com` through. A name that does not resolve is not loopback.
    public static func isLoopback(_ host: String) -> Bool {
        let addresses = LoopbackCheck.addresses(of: host)
        return !addresses.isEmpty && addresses.allSatisfy(LoopbackCheck.isLoopback)
    }
}
