import CSpeakerSyncPluginABI
import Logging

/// What a plugin's `host->log` calls reach: the registry's logger, tagged with the plugin's path.
/// Reached through `host_data`, because a C function pointer cannot capture context.
final class PluginLogContext: Sendable {
    let logger: Logger
    let path: String

    init(logger: Logger, path: String) {
        self.logger = logger
        self.path = path
    }
}

/// The `log` member of every host table. Safe to call from any thread: Logger is thread-safe.
let pluginLogCallback: @convention(c) (UnsafePointer<speakersync_host_t>?, Int32, UnsafePointer<CChar>?) -> Void = {
    host, level, message in
    guard let host, let data = host.pointee.host_data, let message else { return }
    let context = Unmanaged<PluginLogContext>.fromOpaque(data).takeUnretainedValue()
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
