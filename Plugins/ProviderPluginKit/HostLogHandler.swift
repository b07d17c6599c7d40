import CSpeakerSyncPluginABI
import Logging

/// swift-log inside the plugin writes through the host's log callback, never to stdout: the plugin
/// has its own copy of swift-log, whose global bootstrap the host never sees. `prefix` names the plugin.
struct HostLogHandler: LogHandler {
    let host: UnsafePointer<speakersync_host_t>
    let prefix: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let merged = metadata.merging(extra ?? [:]) { $1 }
        let details = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let hostLevel: Int32 = switch level {
        case .trace, .debug: Int32(SPEAKERSYNC_LOG_DEBUG.rawValue)
        case .info, .notice: Int32(SPEAKERSYNC_LOG_INFO.rawValue)
        case .warning: Int32(SPEAKERSYNC_LOG_WARNING.rawValue)
        case .error, .critical: Int32(SPEAKERSYNC_LOG_ERROR.rawValue)
        }
        "\(prefix): \(message)\(details)".withCString { host.pointee.log(host, hostLevel, $0) }
    }
}
