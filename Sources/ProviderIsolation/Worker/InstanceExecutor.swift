import Foundation

/// Runs the worker's instance calls: each instance's calls one at a time in the order they arrived,
/// different instances in parallel on a fixed pool of about one thread per core, and reads the
/// requests too (leader/follower).
///
/// One pool thread at a time is the reader: it blocks reading the server's socket, routes what it
/// read into the instances' mailboxes, and then runs the first ready mailbox itself, so a request
/// runs on the thread that read it with no hand-over. It wakes another thread only when there is more
/// than one mailbox ready (work for two); under load the other threads are busy anyway and pick up
/// ready mailboxes as they finish.
///
/// Calls that may take long (create, finalize) move their instance's mailbox to a second pool of the
/// same size, which runs them and whatever the instance queues behind them: a few long finalizes then
/// cannot occupy every thread while other sessions' chunks wait (the watchdog would take such a waiting
/// chunk for a hung call), and the worker still never runs more CPU-bound threads than two per core.
///
/// Calls that can run together (a push into a plugin that takes many pushes in one call: ABI revision 6)
/// carry a batch key. A thread about to run such a call also takes, from the mailboxes waiting behind
/// it, every one whose next call has the same key (up to `maximumBatch`), and runs them all in one
/// `runBatch`: continuous batching, as inference servers do it. Nothing waits for a batch to fill:
/// with threads to spare each push runs alone, as soon as it arrives; when pushes queue up because the
/// threads are busy, the queue is the batch.
///
/// Why not dispatch queues: a serial queue per instance gets a thread of its own whenever it has work
/// (37 threads for 50 speakerkit sessions on 2 cores, and up to 64 finalizing at once); the kernel
/// shares the cores per thread, so dozens of busy worker threads starved the server's store writer
/// even at nice +5. Each hand-over also cost a wake-up plus dispatch's spinning before a thread sleeps
/// (`speakersync-bench isolation`: see docs/benchmarks.md).
final class InstanceExecutor: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var ready = ReadyList()
    private var longReady = ReadyList()
    private var idleThreads = 0
    private var readerActive = false
    private var reader: (() -> Void)?

    /// One instance's queued calls.
    final class Mailbox: @unchecked Sendable {
        fileprivate var work: [Work] = []
        fileprivate var scheduled = false
    }

    fileprivate struct Work {
        var body: () -> Void
        var mayTakeLong: Bool
        /// Set when the call may run in a batch with others of the same key: what `runBatch` gets.
        var batch: (key: UInt, item: Any)?
    }

    /// Mailboxes waiting for a thread, first come first served.
    private struct ReadyList {
        var mailboxes: [Mailbox] = []
        var head = 0
        var isEmpty: Bool { head == mailboxes.count }
        var count: Int { mailboxes.count - head }
        mutating func append(_ mailbox: Mailbox) { mailboxes.append(mailbox) }
        /// Removes and returns up to `limit` waiting mailboxes whose next call has batch key `key`,
        /// keeping the others in order.
        mutating func takeBatch(key: UInt, limit: Int) -> [Mailbox] {
            guard limit > 0, !isEmpty else { return [] }
            var taken: [Mailbox] = [], kept: [Mailbox] = []
            for mailbox in mailboxes[head...] {
                if taken.count < limit, let work = mailbox.work.first, !work.mayTakeLong, work.batch?.key == key {
                    taken.append(mailbox)
                } else {
                    kept.append(mailbox)
                }
            }
            if !taken.isEmpty {
                mailboxes = kept
                head = 0
            }
            return taken
        }
        mutating func take() -> Mailbox {
            defer {
                head += 1
                if head == mailboxes.count {
                    mailboxes.removeAll(keepingCapacity: true)
                    head = 0
                }
            }
            return mailboxes[head]
        }
    }

    private let threadCount: Int
    /// Runs the batch items of calls taken together (all of one key), on the thread that took them.
    private let runBatch: (([Any]) -> Void)?
    /// At most this many calls in one batch.
    let maximumBatch: Int

    init(threads: Int = max(2, ProcessInfo.processInfo.activeProcessorCount), maximumBatch: Int = 64, runBatch: (([Any]) -> Void)? = nil) {
        threadCount = threads
        self.maximumBatch = maximumBatch
        self.runBatch = runBatch
    }

    /// Starts both pools; `read` blocks until it has read something and routes it with `submit`.
    func start(reading read: @escaping () -> Void) {
        condition.lock()
        reader = read
        condition.unlock()
        for index in 0 ..< threadCount {
            spawn("speakersync.worker.calls.\(index)") { [self] in loop() }
            spawn("speakersync.worker.long-calls.\(index)") { [self] in longLoop() }
        }
    }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues `body` behind the mailbox's earlier calls. Called by the reader; `mayTakeLong` marks a
    /// call that goes to the long-call pool.
    func submit(_ mailbox: Mailbox, mayTakeLong: Bool = false, batch: (key: UInt, item: Any)? = nil, _ body: @escaping () -> Void) {
        condition.lock()
        mailbox.work.append(Work(body: body, mayTakeLong: mayTakeLong, batch: batch))
        if !mailbox.scheduled {
            mailbox.scheduled = true
            ready.append(mailbox)
        }
        condition.unlock()
    }

    /// A thread of the first pool: runs ready mailboxes, else reads, else sleeps.
    private func loop() {
        condition.lock()
        while true {
            if !ready.isEmpty {
                run(ready.take(), longPool: false)
            } else if !readerActive, let read = reader {
                readerActive = true
                condition.unlock()
                read()
                condition.lock()
                readerActive = false
                if ready.count > 1, idleThreads > 0 { condition.broadcast() }
            } else {
                idleThreads += 1
                condition.wait()
                idleThreads -= 1
            }
        }
    }

    /// A thread of the long-call pool.
    private func longLoop() {
        condition.lock()
        while true {
            if !longReady.isEmpty {
                run(longReady.take(), longPool: true)
            } else {
                condition.wait()
            }
        }
    }

    /// Runs a mailbox's queued calls in order (called and returning with the lock held). In the first
    /// pool, a call that may take long sends the mailbox, still scheduled, to the long-call pool.
    private func run(_ mailbox: Mailbox, longPool: Bool) {
        while !mailbox.work.isEmpty {
            if !longPool, mailbox.work[0].mayTakeLong {
                longReady.append(mailbox)
                condition.broadcast()
                return
            }
            if !longPool, let batch = mailbox.work[0].batch, let runBatch {
                let companions = ready.takeBatch(key: batch.key, limit: maximumBatch - 1)
                if !companions.isEmpty {
                    let items = ([mailbox] + companions).map { $0.work.removeFirst().batch!.item }
                    condition.unlock()
                    runBatch(items)
                    condition.lock()
                    // The companions go back behind the others if they have more to do.
                    for companion in companions {
                        if companion.work.isEmpty { companion.scheduled = false } else { ready.append(companion) }
                    }
                    if !ready.isEmpty, idleThreads > 0 { condition.signal() }
                    continue
                }
            }
            let body = mailbox.work.removeFirst().body
            condition.unlock()
            body()
            condition.lock()
        }
        mailbox.scheduled = false
    }
}
