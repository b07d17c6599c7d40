#if canImport(Glibc)
import Glibc
#endif
import CProviderProcess

/// The raw calls of the provider sandbox (provider_sandbox.c, provider_seccomp.c), each a -1/errno return turned into a
/// thrown `SystemCallError`. `ProviderSandbox` decides what to call and in which order.
extension Syscall {
    /// Empties the capability bounding set of the calling thread (threads it starts later inherit it).
    static func dropBoundingSet() throws(SystemCallError) {
        try check("prctl(PR_CAPBSET_DROP)") { speakersync_sandbox_drop_bounding_set() }
    }

    /// Clears the calling thread's effective, permitted, inheritable and ambient capabilities.
    static func clearCapabilities() throws(SystemCallError) {
        try check("capset") { speakersync_sandbox_clear_capabilities() }
    }

    /// No supplementary groups, then every gid and uid of every thread (glibc applies setresuid to all
    /// threads); fails if the old identity could be taken back.
    static func switchUser(uid: uid_t, gid: gid_t) throws(SystemCallError) {
        try check("setresuid/setresgid") { speakersync_sandbox_switch_user(uid, gid) }
    }

    /// Whether the constructor before main emptied the bounding set and set no_new_privs: true if it
    /// did, false if it did not run; throws what failed.
    static func earlySandboxApplied() throws(SystemCallError) -> Bool {
        try check("early sandbox (bounding set, no_new_privs)") { speakersync_sandbox_early_status() } == 0
    }

    /// Switches thread `tid` of this process to `uid`/`gid` (one that glibc's broadcast skipped).
    static func switchThread(_ tid: pid_t, uid: uid_t, gid: gid_t) throws(SystemCallError) {
        try check("setresuid on thread \(tid)") { speakersync_sandbox_switch_thread(tid, uid, gid) }
    }

    /// Empties the bounding set of thread `tid` of this process (one started before the constructor).
    static func dropBoundingSet(onThread tid: pid_t) throws(SystemCallError) {
        try check("prctl(PR_CAPBSET_DROP) on thread \(tid)") { speakersync_sandbox_drop_bounding_set_on_thread(tid) }
    }

    /// Sets no_new_privs on the calling thread (seccomp's TSYNC later sets it on every thread).
    static func setNoNewPrivileges() throws(SystemCallError) {
        try check("prctl(PR_SET_NO_NEW_PRIVS)") { speakersync_sandbox_set_no_new_privs() }
    }

    /// Installs the worker's seccomp filter on every thread.
    static func installSeccompFilter(allowInet: Bool) throws(SystemCallError) {
        guard speakersync_seccomp_supported() != 0 else { throw SystemCallError(call: "seccomp (this architecture)", errno: ENOSYS) }
        try check("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)") { speakersync_seccomp_install(getpid(), allowInet ? 1 : 0) }
    }

    /// The kernel's Landlock ABI version, 0 when Landlock is absent or disabled.
    static func landlockABI() -> Int32 {
        speakersync_landlock_abi()
    }

    /// Makes this process not dumpable: its /proc memory, environment and descriptors then belong to
    /// root, so another process of the same account (another worker) cannot open them.
    static func makeUndumpable() throws(SystemCallError) {
        try check("prctl(PR_SET_DUMPABLE, 0)") { speakersync_sandbox_set_dumpable(0) }
    }

    /// What the constructor before main did about Landlock: nil when it was not asked to; the ABI
    /// enforced (0 when the kernel has none); or the failure.
    static func earlyLandlock() -> Result<Int32, SystemCallError>? {
        var error: Int32 = 0
        var path: UnsafePointer<CChar>?
        let status = speakersync_sandbox_early_landlock(&error, &path)
        switch status {
        case 0: return nil
        case -1: return .success(0)
        case -2:
            let about = path.map { String(cString: $0) } ?? ""
            return .failure(SystemCallError(call: about.isEmpty ? "landlock" : "landlock rule for \(about)", errno: error))
        default: return .success(status)
        }
    }

    /// The account `name` as (uid, gid), or nil when it does not exist.
    static func account(named name: String) -> (uid: uid_t, gid: gid_t)? {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }
}
