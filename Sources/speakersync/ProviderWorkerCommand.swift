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
    @Option(name: .customLong("log-level")) var logLevel: LogLevelOption = .info
    @Flag(name: .customLong("receives-configuration")) var receivesConfiguration = false
    @Flag(name: .customLong("report-backlog")) var reportBacklog = false
    @Option var sandbox: String = "off"
    @Option(name: .customLong("sandbox-uid")) var sandboxUID: UInt32?
    @Option(name: .customLong("sandbox-gid")) var sandboxGID: UInt32?
    @Option(name: .customLong("sandbox-account-missing")) var sandboxAccountMissing: String?
    @Option(name: .customLong("sandbox-network-provider")) var sandboxNetworkProviders: [String] = []
    /// Read by provider_sandbox.c's constructor before main; parsed here so they are accepted.
    @Option(name: .customLong("landlock-read")) var landlockRead: [String] = []
    @Option(name: .customLong("landlock-write")) var landlockWrite: [String] = []

    var sandboxSettings: ProviderSandboxSettings {
        guard sandbox == "on" else { return .disabled }
        let account: ProviderSandboxSettings.Account
        if let sandboxUID, let sandboxGID {
            account = .switchTo(uid: sandboxUID, gid: sandboxGID)
        } else if let sandboxAccountMissing {
            account = .missing(reason: sandboxAccountMissing)
        } else {
            account = .unchanged
        }
        return ProviderSandboxSettings(enabled: true, account: account, networkProviders: sandboxNetworkProviders,
                                       landlockRead: landlockRead, landlockWrite: landlockWrite)
    }

    func run() throws {
        var config = ProviderWorkerConfig(
            pluginPath: plugin, parentPID: parentPID, protocolVersion: protocolVersion, memoryLimitBytes: memoryLimitBytes,
            niceIncrement: nice, logLevel: logLevel.level, receivesConfiguration: receivesConfiguration,
            sandbox: sandboxSettings)
        config.reportsBacklog = reportBacklog
        ProviderWorker.run(config)
    }
}
