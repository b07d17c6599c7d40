#if canImport(Glibc)
import Glibc
#endif
import ChildProcesses
import Foundation
import Logging

/// The account provider workers run as when the server is root, found (or created) once at start.
///
/// A dedicated system account rather than `nobody`: the embedded PostgreSQL runs as `nobody` (and so
/// may other daemons), and a plugin sharing its uid could signal it or open what it owns. An account
/// of its own owns no file, so after the switch a plugin reads only what is readable by everyone.
enum SandboxAccount {
    static func settings(_ config: ProviderSandboxConfig, logger: Logger) -> ProviderSandboxSettings {
        guard config.enabled else { return .disabled }
        let network = config.networkProviders.sorted()
        guard geteuid() == 0 else { return ProviderSandboxSettings(enabled: true, account: .unchanged, networkProviders: network) }
        return ProviderSandboxSettings(enabled: true, account: account(config, logger: logger), networkProviders: network)
    }

    private static func account(_ config: ProviderSandboxConfig, logger: Logger) -> ProviderSandboxSettings.Account {
        if let found = Syscall.account(named: config.user) { return checked(found, config.user) }
        guard config.createsUser else {
            return .missing(reason: "user \(config.user) does not exist (create it: useradd --system --user-group \(config.user))")
        }
        let created = createSystemUser(config.user)
        // Another server may have created it meanwhile (useradd then fails): look again either way.
        if let found = Syscall.account(named: config.user) {
            logger.info("created the provider worker account", metadata: ["user": "\(config.user)"])
            return checked(found, config.user)
        }
        logger.error("no account for provider workers", metadata: ["user": "\(config.user)", "useradd": "\(created)"])
        return .missing(reason: "user \(config.user) does not exist and could not be created: \(created)")
    }

    private static func checked(_ found: (uid: uid_t, gid: gid_t), _ name: String) -> ProviderSandboxSettings.Account {
        guard found.uid != 0, found.gid != 0 else { return .missing(reason: "user \(name) is root (uid \(found.uid) gid \(found.gid))") }
        return .switchTo(uid: UInt32(found.uid), gid: UInt32(found.gid))
    }

    /// Runs useradd for a system account with a group of its own, no home and no login shell. Returns
    /// what happened, for the log.
    private static func createSystemUser(_ name: String) -> String {
        var configuration = Subprocess.Configuration(
            executable: "/usr/sbin/useradd",
            arguments: ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--comment", "SpeakerSync provider workers", name])
        configuration.standardError = .pipe
        do {
            let done = try Subprocess.run(configuration)
            return "useradd ended with \(done.exit) \(done.standardErrorText.trimmingCharacters(in: .whitespacesAndNewlines))"
        } catch {
            return "useradd did not start: \(error)"
        }
    }
}
