import CSpeakerSyncPluginABI
import Logging

/// The host table a plugin's init() received, as Swift: a logger that writes through `host->log`, the
/// operator's provider configuration (revision 4's `provider_config`, nil from older hosts) and the
/// host's backlog (revision 5).
/// Sendable: the host table is the host's, immutable and valid until deinit, and its callbacks may be
/// called from any thread (speakersync_plugin.h).
public struct PluginHostConnection: @unchecked Sendable {
    public let logger: Logger
    private let host: UnsafePointer<speakersync_host_t>

    init(host: UnsafePointer<speakersync_host_t>, pluginName: String) {
        self.host = host
        var logger = Logger(label: pluginName) { _ in HostLogHandler(host: host, prefix: pluginName) }
        logger.logLevel = .info
        self.logger = logger
    }

    /// The provider's section of the server's provider config file, as JSON text; nil when none (or the
    /// host predates revision 4). May hold secrets: never log it.
    public func configuration(for providerID: String) -> String? {
        guard hostHas(\.provider_config), let lookup = host.pointee.provider_config else { return nil }
        return providerID.withCString { lookup(host, $0) }.map { String(cString: $0) }
    }

    /// How long the push now starting waited in the host's queue (revision 5's `backlog_seconds`); 0
    /// from a host that does not measure it or predates revision 5.
    public func backlogSeconds() -> Double {
        guard hostHas(\.backlog_seconds), let read = host.pointee.backlog_seconds else { return 0 }
        let seconds = read(host)
        return seconds.isFinite ? max(0, seconds) : 0
    }

    /// Whether the host's table reaches past `member` (the C side's SPEAKERSYNC_HAS_MEMBER): tables
    /// only grow at the end, so an older host's is shorter.
    private func hostHas<Member>(_ member: KeyPath<speakersync_host_t, Member>) -> Bool {
        guard let offset = MemoryLayout<speakersync_host_t>.offset(of: member) else { return false }
        return Int(host.pointee.struct_size) >= offset + MemoryLayout<Member>.size
    }
}
