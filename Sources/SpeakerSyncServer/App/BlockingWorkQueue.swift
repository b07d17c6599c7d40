import Foundation

/// A fixed number of threads for work that blocks (PostgreSQL reads), taking jobs in order.
///
/// Why not a Dispatch queue: a concurrent queue whose jobs block makes libdispatch add threads,
/// without bound, exactly when PostgreSQL is slow or stopped; and a session's serial queue must
/// never wait for PostgreSQL at all (its device's frames queue up behind it). Here the blocking
/// work of every session start shares `threadCount` threads, as it shares that many connections.
final class BlockingWorkQueue: @unchecked Sendable { // state guarded by `condition`; threads live for the process
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    let threadCount: Int

    init(label: String, threadCount: Int) {
        self.threadCount = max(1, threadCount)
        for index in 0..<self.threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "\(label).\(index)"
            thread.start()
        }
    }

    /// Runs `job` on one of the threads, after the jobs queued before it.
    func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Jobs waiting for a thread (not counting those running).
    var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count - head
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
