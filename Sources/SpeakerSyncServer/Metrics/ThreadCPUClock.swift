import Foundation

/// CPU time of the calling thread. A session's provider work runs synchronously on its queue's
/// thread, so the difference around a call is the CPU that call cost, whatever else shares the cores.
enum ThreadCPUClock {
    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
