import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One thread, at a lower scheduling priority (nice 10), that runs jobs in the order they were queued:
/// work that must be done but not before anyone's labels (speakerkit's overlap segmentation). On a busy
/// machine the kernel gives it what the session threads leave; on an idle one it runs at once. The
/// thread starts with the first job and stays. Any thread may queue; jobs run one at a time.
public final class LowPriorityWorker: Sendable {
    public static let niceValue: Int32 = 10
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var started = false
    }
    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let name: String

    public init(name: String) {
        self.name = name
    }

    public func enqueue(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.start()
        }
        wakeUp.signal()
    }

    /// Jobs queued and not yet started.
    public var waitingCount: Int { state.withLock { $0.jobs.count } }

    private func run() {
        #if canImport(Glibc)
        // On Linux the nice value is a thread's own (setpriority(2), NOTES): who 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceValue)
        #endif
        while true {
            wakeUp.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in state.jobs.isEmpty ? nil : state.jobs.removeFirst() }
            job?()
        }
    }
}
