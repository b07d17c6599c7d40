import ArgumentParser
import Logging
import ProviderIsolation

/// The provider worker the server starts for each plugin file (or session): not a user command, so
/// hidden from help. It reads requests on descriptor 3 until the server closes it.
struct ProviderWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider-worker", abstract: "Internal: hosts one provider plugin for a SpeakerSync server.",
        shouldDisplay: false)

    @Option var plugin: String
    @Option(name: .customLong("parent-pid")) var parentPID: Int32
    @Option(name: .customLong("protocol")) var protocolVersion: UInt32
    @Option(name: .customLong("memory-limit-bytes")) var memoryLimitBytes: UInt64?
    @Option var nice: Int32 = 0
    @Option(name: .customLong("log-level")) var logLevel: String = "info"
    @Option(name: .customLong("provider-config")) var providerConfig: String?

    func run() throws {
        ProviderWorker.run(ProviderWorkerConfig(
            pluginPath: plugin, parentPID: parentPID, protocolVersion: protocolVersion, memoryLimitBytes: memoryLimitBytes,
            niceIncrement: nice, logLevel: Logger.Level(rawValue: logLevel) ?? .info, providerConfigPath: providerConfig))
    }
}
