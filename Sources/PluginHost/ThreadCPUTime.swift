#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time of the calling thread. A provider call runs synchronously on one thread (the session's
/// queue in process, an instance queue in a worker), so the difference around the call is the CPU it
/// cost, whatever else shares the cores.
public enum ThreadCPUTime {
    public static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
