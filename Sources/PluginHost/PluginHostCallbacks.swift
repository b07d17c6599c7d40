#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSpeakerSyncPluginABI
import Logging
import Synchronization

/// What a plugin's host callbacks reach: the registry's logger, tagged with the plugin's path, and the
/// operator's provider configuration. Reached through `host_data`, because a C function pointer cannot
/// capture context. Sendable: every member is immutable after init (the C strings are written once
/// and freed in deinit) or atomic (the backlog), and the logger is thread-safe.
final class PluginHostContext: @unchecked Sendable {
    let logger: Logger
    let path: String
    /// Each provider's config section as a C string, alive as long as the context (until deinit).
    private let configs: [String: UnsafeMutablePointer<CChar>]

    init(logger: Logger, path: String, configuration: ProviderConfiguration) {
        self.logger = logger
        self.path = path
        configs = configuration.sections.mapValues { strdup($0)! }
    }

    /// The host's backlog (revision 5's `backlog_seconds`): set by whoever runs the plugin's pushes.
    private let backlog = Atomic<UInt64>(0)

    var backlogSeconds: Double {
        get { Double(bitPattern: backlog.load(ordering: .relaxed)) }
        set { backlog.store(newValue.bitPattern, ordering: .relaxed) }
    }

    func config(for providerID: String) -> UnsafePointer<CChar>? {
        configs[providerID].map { UnsafePointer($0) }
    }

    deinit {
        for pointer in configs.values { free(pointer) }
    }
}

/// The `log` member of every host table. Safe to call from any thread: Logger is thread-safe.
let pluginLogCallback: @convention(c) (UnsafePointer<speakersync_host_t>?, Int32, UnsafePointer<CChar>?) -> Void = {
    host, level, message in
    guard let host, let data = host.pointee.host_data, let message else { return }
    let context = Unmanaged<PluginHostContext>.fromOpaque(data).takeUnretainedValue()
    let text = String(cString: message)
    let swiftLevel: Logger.Level
    switch level {
    case Int32(SPEAKERSYNC_LOG_DEBUG.rawValue): swiftLevel = .debug
    case Int32(SPEAKERSYNC_LOG_INFO.rawValue): swiftLevel = .info
    case Int32(SPEAKERSYNC_LOG_WARNING.rawValue): swiftLevel = .warning
    default: swiftLevel = .error
    }
    context.logger.log(level: swiftLevel, "\(text)", metadata: ["plugin": "\(context.path)"])
}

/// The `provider_config` member of every host table (revision 4): the provider's section, or NULL.
let pluginProviderConfigCallback: @convention(c) (UnsafePointer<speakersync_host_t>?, UnsafePointer<CChar>?) -> UnsafePointer<CChar>? = {
    host, providerID in
    guard let host, let data = host.pointee.host_data, let providerID else { return nil }
    let context = Unmanaged<PluginHostContext>.fromOpaque(data).takeUnretainedValue()
    return context.config(for: String(cString: providerID))
}

/// The `backlog_seconds` member of every host table (revision 5): what the host last measured.
let pluginBacklogCallback: @convention(c) (UnsafePointer<speakersync_host_t>?) -> Double = { host in
    guard let host, let data = host.pointee.host_data else { return 0 }
    return Unmanaged<PluginHostContext>.fromOpaque(data).takeUnretainedValue().backlogSeconds
}
