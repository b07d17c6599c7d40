#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// What the server tells a worker about its sandbox (docs/security.md, "The provider sandbox"); it
/// travels as worker arguments.
public struct ProviderSandboxSettings: Sendable, Equatable {
    /// Which account the worker ends up as.
    public enum Account: Sendable, Equatable {
        /// The server is not root: the worker keeps the server's (unprivileged) user.
        case unchanged
        /// The server is root: the worker switches to this uid and gid once its plugin is loaded.
        case switchTo(uid: UInt32, gid: UInt32)
        /// The server is root but found no account to switch to: the worker must not run providers.
        case missing(reason: String)
    }

    /// false only for benchmarks and debugging: the worker runs with the server's privileges.
    public var enabled: Bool
    public var account: Account
    /// Provider ids that may open AF_INET/AF_INET6 sockets (Falcon activates its licence online).
    public var networkProviders: [String]
    /// The files the worker may reach, put in force before main by provider_sandbox.c (empty: no
    /// Landlock). The server computes them (`LandlockRules`).
    var landlock: [LandlockRule] = []

    public init(enabled: Bool, account: Account, networkProviders: [String]) {
        self.enabled = enabled
        self.account = account
        self.networkProviders = networkProviders
    }

    /// Settings parsed back from worker arguments, Landlock rules included.
    public init(enabled: Bool, account: Account, networkProviders: [String], landlockRead: [String], landlockWrite: [String]) {
        self.init(enabled: enabled, account: account, networkProviders: networkProviders)
        landlock = landlockRead.map { LandlockRule(path: $0, access: .read) } + landlockWrite.map { LandlockRule(path: $0, access: .readWrite) }
    }

    public static let disabled = ProviderSandboxSettings(enabled: false, account: .unchanged, networkProviders: [])

    /// The worker arguments that carry these settings (parsed back by `ProviderWorkerCommand`).
    public var arguments: [String] {
        guard enabled else { return ["--sandbox", "off"] }
        var arguments = ["--sandbox", "on"]
        switch account {
        case .unchanged: break
        case .switchTo(let uid, let gid): arguments += ["--sandbox-uid", "\(uid)", "--sandbox-gid", "\(gid)"]
        case .missing(let reason): arguments += ["--sandbox-account-missing", reason]
        }
        for id in networkProviders { arguments += ["--sandbox-network-provider", id] }
        for rule in landlock {
            arguments += [rule.access == .read ? "--landlock-read" : "--landlock-write", rule.path]
        }
        return arguments
    }
}

/// Why a worker's sandbox is not what it declares; its providers are then listed unavailable with this.
public struct ProviderSandboxError: Error, Sendable, CustomStringConvertible {
    /// Stable codes, for logs and tests.
    public enum Code: String, Sendable {
        case accountMissing = "sandbox_account_missing"
        case rootAccount = "sandbox_root_account"
        case capabilities = "sandbox_capabilities"
        case identity = "sandbox_identity"
        case noNewPrivileges = "sandbox_no_new_privs"
        case seccomp = "sandbox_seccomp"
        case landlock = "sandbox_landlock"
        case parentGone = "sandbox_parent_gone"
        case verification = "sandbox_verification"
    }

    public var code: Code
    public var message: String

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Confines the worker in three steps around the plugin load:
///
/// - `prepare`: no_new_privs, as root an empty capability bounding set, and the Landlock ruleset
///   (`LandlockRules`, computed by the server and passed as arguments). All three are per thread and
///   inherited by threads started later, so provider_sandbox.c applies them in a constructor before
///   main, while the worker has one thread (and signals the threads an earlier constructor started);
///   `prepare` checks that it did (or applies the first two itself when the constructor did not run).
/// - `becomeAccount`, before the plugin is loaded: as root, the unprivileged account (glibc's
///   setresuid, then a signal for each live thread it skipped). The plugin's constructors and its
///   init() run as that account: they cannot read what root alone may (the admin key file, the
///   provider config file), and its models must be readable by the account.
/// - `confine`, once the plugin and its models are loaded: no capabilities, a check that Landlock is
///   in force, and the seccomp filter on every thread (TSYNC; whether the
///   network stays open depends on the providers the plugin declared). Then every thread is checked in
///   /proc/self/task: a worker whose threads are not all as declared runs no provider.
///
/// A layer the kernel lacks (seccomp not built in, Landlock absent or disabled) is logged and skipped;
/// anything else that fails is a `ProviderSandboxError`.
struct ProviderSandbox {
    let settings: ProviderSandboxSettings
    let logger: Logger
    private let startedAsRoot = geteuid() == 0

    init(settings: ProviderSandboxSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    func prepare() throws(ProviderSandboxError) {
        guard settings.enabled else {
            logger.warning("the provider sandbox is off: this worker runs with the server's privileges")
            return
        }
        if startedAsRoot, case .missing(let reason) = settings.account {
            throw ProviderSandboxError(code: .accountMissing, message: reason)
        }
        do {
            if try Syscall.earlySandboxApplied() {
                // A thread a shared library started before the constructor keeps a full bounding set.
                if startedAsRoot {
                    for tid in ThreadCredentials.liveThreads(where: { $0["CapBnd"] != "0000000000000000" }) {
                        try Syscall.dropBoundingSet(onThread: tid)
                    }
                }
                return
            }
        } catch {
            throw ProviderSandboxError(code: .capabilities, message: "the bounding set or no_new_privs was not applied before main: \(error)")
        }
        if startedAsRoot {
            do {
                try Syscall.dropBoundingSet()
            } catch {
                throw ProviderSandboxError(code: .capabilities, message: "the capability bounding set was not emptied: \(error)")
            }
        }
        do {
            try Syscall.setNoNewPrivileges()
        } catch {
            throw ProviderSandboxError(code: .noNewPrivileges, message: "no_new_privs was not set: \(error)")
        }
    }

    /// Before the plugin loads, as root: becomes the provider account. Returns it (nil when the worker
    /// keeps the server's user). `parentPID`: the server, whose death must still end this worker after
    /// the identity changes.
    func becomeAccount(parentPID: Int32) throws(ProviderSandboxError) -> (uid: UInt32, gid: UInt32)? {
        guard settings.enabled, startedAsRoot else { return nil }
        guard case .switchTo(let uid, let gid) = settings.account else {
            throw ProviderSandboxError(code: .accountMissing, message: "the server runs as root and named no account for provider workers")
        }
        guard uid != 0, gid != 0 else {
            throw ProviderSandboxError(code: .rootAccount, message: "the provider account is uid \(uid) gid \(gid); it must not be root")
        }
        do {
            try Syscall.switchUser(uid: uid_t(uid), gid: gid_t(gid))
            // glibc switches every thread it does not consider exiting; Dispatch's main thread is
            // "exiting" yet alive (see speakersync_sandbox_switch_thread): switch those one by one.
            for tid in ThreadCredentials.liveThreads(notRunningAs: uid) {
                try Syscall.switchThread(tid, uid: uid_t(uid), gid: gid_t(gid))
            }
        } catch {
            throw ProviderSandboxError(code: .identity, message: "the worker could not become uid \(uid) gid \(gid): \(error)")
        }
        // A change of identity clears the parent-death signal: set it again, and end if the server
        // died in between.
        try? Syscall.setParentDeathSignal(SIGKILL)
        guard getppid() == parentPID else { throw ProviderSandboxError(code: .parentGone, message: "the server ended") }
        return (uid, gid)
    }

    /// Once the plugin is loaded. `providerIDs`: what it offers (decides whether the network stays
    /// open); `account`: what `becomeAccount` returned.
    func confine(providerIDs: [String], account: (uid: UInt32, gid: UInt32)?) throws(ProviderSandboxError) -> AppliedSandbox {
        guard settings.enabled else { return AppliedSandbox(account: nil, seccomp: false, network: true) }
        do {
            try Syscall.clearCapabilities()
        } catch {
            throw ProviderSandboxError(code: .capabilities, message: "the capabilities were not cleared: \(error)")
        }
        // The account switch already made a root-started worker undumpable; one started by a server
        // that is not root shares its user with every other worker, so it is made so here.
        do {
            try Syscall.makeUndumpable()
        } catch {
            throw ProviderSandboxError(code: .identity, message: "the worker could not be made undumpable: \(error)")
        }
        var landlockABI: Int32 = 0
        switch Syscall.earlyLandlock() {
        case nil where !settings.landlock.isEmpty:
            throw ProviderSandboxError(code: .landlock, message: "the Landlock rules were not applied before main")
        case nil:
            break
        case .success(0):
            logger.warning("Landlock is not available in this kernel; the worker's files are confined by its account alone")
        case .success(let abi):
            landlockABI = abi
        case .failure(let error):
            throw ProviderSandboxError(code: .landlock, message: "the Landlock ruleset was not applied: \(error)")
        }
        let network = providerIDs.contains { settings.networkProviders.contains($0) }
        var seccomp = true
        do {
            try Syscall.installSeccompFilter(allowInet: network)
        } catch let error where error.errno == ENOSYS || error.errno == EINVAL {
            // A kernel without seccomp filters (or this architecture unsupported): a missing layer.
            logger.warning("seccomp is not available; the worker runs without its system call filter", metadata: ["error": "\(error)"])
            seccomp = false
        } catch {
            throw ProviderSandboxError(code: .seccomp, message: "the seccomp filter was not installed: \(error)")
        }
        let applied = AppliedSandbox(account: account, seccomp: seccomp, network: network, landlockABI: landlockABI)
        try ThreadCredentials.verifyEveryThread(applied)
        logger.debug("provider sandbox applied", metadata: ["sandbox": "\(applied)"])
        return applied
    }
}

/// What `ProviderSandbox.confine` put in place, which every thread is then checked against.
struct AppliedSandbox: Sendable, CustomStringConvertible {
    var account: (uid: UInt32, gid: UInt32)?
    var seccomp: Bool
    var network: Bool
    /// The Landlock ABI the ruleset was enforced with; 0 when the kernel has no Landlock. (The kernel
    /// does not show a thread's Landlock domain in /proc, so it is not part of the per-thread check.)
    var landlockABI: Int32 = 0

    var description: String {
        let who = account.map { "uid \($0.uid) gid \($0.gid)" } ?? "unchanged user"
        let landlock = landlockABI > 0 ? "Landlock ABI \(landlockABI)" : "Landlock unavailable"
        return "\(who), no capabilities, no_new_privs, \(landlock), seccomp \(seccomp ? "on" : "unavailable"), network \(network ? "allowed" : "denied")"
    }
}

/// Each thread's credentials as the kernel reports them (/proc/self/task/TID/status): capabilities,
/// no_new_privs and seccomp are per thread, so checking the calling thread alone proves nothing.
enum ThreadCredentials {
    static func verifyEveryThread(_ applied: AppliedSandbox) throws(ProviderSandboxError) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        guard !tasks.isEmpty else { throw ProviderSandboxError(code: .verification, message: "/proc/self/task could not be read") }
        for task in tasks {
            // A thread that ended meanwhile has no status left to check.
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { continue }
            let fields = fields(status)
            // A thread that has exited but stays listed (the main thread after Dispatch's pthread_exit
            // in dispatch_main) runs no code again; its status keeps the credentials it died with.
            if let state = fields["State"], state.hasPrefix("Z") || state.hasPrefix("X") { continue }
            if let problem = problem(in: fields, applied) {
                throw ProviderSandboxError(code: .verification, message: "thread \(task): \(problem)")
            }
        }
    }

    /// The live threads whose real, effective, saved or filesystem uid is not `uid`.
    static func liveThreads(notRunningAs uid: UInt32) -> [pid_t] {
        liveThreads { fields in
            let uids = fields["Uid"]?.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
            return uids != Array(repeating: "\(uid)", count: 4)
        }
    }

    /// The live threads (not exited) whose status fields match `condition`.
    static func liveThreads(where condition: ([String: String]) -> Bool) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> pid_t? in
            guard let tid = pid_t(task),
                  let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { return nil }
            let fields = fields(status)
            if let state = fields["State"], state.hasPrefix("Z") || state.hasPrefix("X") { return nil }
            return condition(fields) ? tid : nil
        }
    }

    static func fields(_ status: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in status.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// What in one thread's status differs from `applied`, or nil.
    static func problem(in fields: [String: String], _ applied: AppliedSandbox) -> String? {
        let empty = "0000000000000000"
        for name in ["CapPrm", "CapEff", "CapAmb"] where fields[name] != empty {
            return "\(name) is \(fields[name] ?? "missing"), not empty"
        }
        if fields["NoNewPrivs"] != "1" { return "NoNewPrivs is \(fields["NoNewPrivs"] ?? "missing")" }
        if applied.seccomp, fields["Seccomp"] != "2" { return "Seccomp is \(fields["Seccomp"] ?? "missing"), not 2 (filter)" }
        if let account = applied.account {
            if fields["CapBnd"] != empty { return "CapBnd is \(fields["CapBnd"] ?? "missing"), not empty" }
            let uids = fields["Uid"]?.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
            let gids = fields["Gid"]?.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
            if uids != Array(repeating: "\(account.uid)", count: 4) { return "Uid is \(fields["Uid"] ?? "missing")" }
            if gids != Array(repeating: "\(account.gid)", count: 4) { return "Gid is \(fields["Gid"] ?? "missing")" }
            if let groups = fields["Groups"], !groups.isEmpty { return "supplementary groups \(groups) remain" }
        }
        return nil
    }
}
