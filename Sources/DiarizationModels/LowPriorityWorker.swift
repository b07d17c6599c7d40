import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One thread, at the lowest scheduling priority (SCHED_IDLE, nice 10), that runs jobs in the order
/// they were queued: work that must be done but not before anyone's labels (speakerkit's overlap
/// segmentation). On a busy machine the kernel gives it what the session threads leave; on an idle
/// one it runs at once. The thread starts with the first job and stays. Any thread may queue; jobs
/// run one at a time.
public final class LowPriorityWorker: Sendable {
    public static let niceValue: Int32 = 10
    /// Linux's SCHED_IDLE (sched(7)); Glibc's module leaves the constant out.
    public static let idlePolicy: Int32 = 5
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var started = false
        /// The thread once it runs (nil before).
        var thread: pthread_t?
        /// Threads blocked on a job of this worker (`whileWaited`): while any, the thread is not idle-class.
        var waiters = 0
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

    /// Runs `wait`, in which the caller blocks until a job of this worker is done, with the worker at
    /// nice 10 rather than SCHED_IDLE: a thread at normal priority waiting on an idle-class one (a
    /// finalize waiting for the piece the worker is segmenting, an upload whose backlog is full) would
    /// otherwise wait for as long as the machine stays busy, a priority inversion. The waiter lends
    /// the worker its place in the queue; the last waiter out puts it back.
    public func whileWaited<T>(_ wait: () throws -> T) rethrows -> T {
        // The policy changes under the lock, so that a waiter leaving and another arriving cannot
        // apply theirs out of order.
        state.withLock { state in
            state.waiters += 1
            if state.waiters == 1, let thread = state.thread { Self.setPolicy(Self.otherPolicy, thread: thread) }
        }
        defer {
            state.withLock { state in
                state.waiters -= 1
                if state.waiters == 0, let thread = state.thread { Self.setPolicy(Self.idlePolicy, thread: thread) }
            }
        }
        return try wait()
    }

    /// SCHED_OTHER, the normal policy (the nice value stays 10).
    public static let otherPolicy: Int32 = 0

    private static func setPolicy(_ policy: Int32, thread: pthread_t) {
        var parameters = sched_param(sched_priority: 0)
        _ = pthread_setschedparam(thread, policy, &parameters)
    }

    /// The worker thread's scheduling policy (SCHED_IDLE, or SCHED_OTHER while waited on); nil before it runs.
    public var currentPolicy: Int32? {
        state.withLock { state -> Int32? in
            guard let thread = state.thread else { return nil }
            var policy: Int32 = -1
            var parameters = sched_param()
            return pthread_getschedparam(thread, &policy, &parameters) == 0 ? policy : nil
        }
    }

    /// Jobs queued and not yet started.
    public var waitingCount: Int { state.withLock { $0.jobs.count } }

    private func run() {
        #if canImport(Glibc)
        // On Linux the nice value is a thread's own (setpriority(2), NOTES): who 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceValue)
        // And SCHED_IDLE: it runs only on a core nothing else wants. Nice 10 alone was not low enough:
        // at 100 speakerkit sessions on two cores this thread still took 37 % of a core (perf), beside
        // session threads whose labels were late; with SCHED_IDLE, 8 %. Whatever it leaves undone
        // waits for the session's finalize, which segments its own pending audio.
        let thread = pthread_self()
        state.withLock { state in
            state.thread = thread
            if state.waiters == 0 { Self.setPolicy(Self.idlePolicy, thread: thread) }
        }
        #endif
        while true {
            wakeUp.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in state.jobs.isEmpty ? nil : state.jobs.removeFirst() }
            job?()
        }
    }
}
