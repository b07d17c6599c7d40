import CSpeakerSyncPluginABI
import Logging

/// The host table a plugin's init() received, as Swift: a logger that writes through `host->log`, and
/// the operator's provider configuration (revision 4's `provider_config`, nil from older hosts).
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
        let hasMember = Int(host.pointee.struct_size)
            >= MemoryLayout<speakersync_host_t>.offset(of: \.provider_config)! + MemoryLayout<UnsafeRawPointer?>.size
        guard hasMember, let lookup = host.pointee.provider_config else { return nil }
        return providerID.withCString { lookup(host, $0) }.map { String(cString: $0) }
    }
}
