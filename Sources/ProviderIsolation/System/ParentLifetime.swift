#if canImport(Glibc)
import Glibc
#endif

/// Ties this process's life to its parent's (Linux PR_SET_PDEATHSIG), the way provider workers are
/// tied to the server: `speakersync serve` does it when SPEAKERSYNC_EXIT_WITH_PARENT is set, so a
/// supervisor (or a test harness) that dies does not leave an orphaned server holding the port.
public enum ParentLifetime {
    public static func exitWithParent() throws {
        try Syscall.setParentDeathSignal(SIGTERM)
    }
}
