import CSpeakerSyncPluginABI
import Foundation
import Logging
import PicovoiceFalcon
import ProviderPluginKit

/// The `falcon` plugin: Picovoice Falcon through its own C library (docs/falcon.md). The provider loads
/// whatever is missing; without a key, a library or an activation it is listed unavailable with the
/// reason (Picovoice's message and error stack, the key redacted) and its sessions are refused.
@_cdecl("speakersync_plugin_entry")
public func speakersyncPluginEntry() -> UnsafePointer<speakersync_plugin_entry_t> {
    PluginEntryTables.entry(name: "falcon") { host in
        [FalconPlugin.provider(host: host)]
    }
}

enum FalconPlugin {
    static let providerID = "falcon"

    static func provider(host: PluginHostConnection) -> FalconProvider {
        let config: FalconConfig
        do {
            config = try FalconConfig.parse(section: host.configuration(for: providerID))
        } catch {
            return FalconProvider(unavailable: "the provider config for falcon is not usable: \(error.message)", logger: host.logger)
        }
        guard config.accessKey != nil else {
            return FalconProvider(unavailable: "no Picovoice AccessKey: set \(FalconConfig.accessKeyVariable), or 'access_key' in the 'falcon' "
                + "section of the provider config file (serve --provider-config); get one at https://console.picovoice.ai/", logger: host.logger)
        }
        do throws(FalconError) {
            let engines = try FalconEnginePool(config: config)
            host.logger.info("Falcon activated", metadata: [
                "version": "\(engines.library.version)", "library": "\(config.libraryPath)", "device": "\(config.device)",
            ])
            return FalconProvider(engines: engines, config: config, logger: host.logger)
        } catch {
            let reason = reason(for: error.redacting(config.accessKey), config: config)
            host.logger.warning("falcon is unavailable", metadata: ["reason": "\(reason)"])
            return FalconProvider(unavailable: reason, logger: host.logger)
        }
    }

    /// What the operator reads in /v1/providers and a refused session: what failed, Picovoice's own
    /// messages, and what to do.
    static func reason(for error: FalconError, config: FalconConfig) -> String {
        switch error.code {
        case .libraryNotFound, .symbolMissing:
            return "\(error.description) (run scripts/setup, which installs PyPI pvfalcon 2.0.1 into vendor/picovoice, or set "
                + "\(FalconConfig.libraryVariable) or 'library')"
        case .modelNotFound:
            return "\(error.description) (run scripts/setup, or set \(FalconConfig.modelVariable) or 'model')"
        case .activationError, .activationLimitReached, .activationThrottled, .activationRefused:
            return "Picovoice could not activate the AccessKey: \(error.description) (Falcon validates its key with Picovoice's servers: "
                + "this server needs internet access and a key with quota)"
        case .invalidArgument, .keyError:
            return "Picovoice refused the AccessKey or the settings: \(error.description)"
        default:
            return "Falcon could not start: \(error.description)"
        }
    }
}
