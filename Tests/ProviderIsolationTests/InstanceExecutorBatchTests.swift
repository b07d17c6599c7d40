import Foundation
import Synchronization
import Testing
@testable import ProviderIsolation

/// The worker's executor takes calls with the same batch key that are waiting in other mailboxes into
/// one batch (continuous batching): at most `maximumBatch`, one call per mailbox, each mailbox's calls
/// still in order, calls of other keys and unkeyed calls alone.
struct InstanceExecutorBatchTests {
    final class Record: Sendable {
        let batches = Mutex<[[String]]>([])
        let singles = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
    }

    @Test func queuedCallsOfOneKeyRunAsBatchesInMailboxOrder() {
        let record = Record()
        let executor = InstanceExecutor(threads: 2, maximumBatch: 3) { items in
            record.batches.withLock { $0.append(items.map { $0 as! String }) }
            for _ in items { record.done.signal() }
        }
        let gate = DispatchSemaphore(value: 0)
        let mailboxes = (0 ..< 6).map { _ in InstanceExecutor.Mailbox() }
        let readOnce = Mutex(true)
        // One read submits everything; later reads block (the test's pool threads stay parked).
        let never = DispatchSemaphore(value: 0)
        executor.start {
            guard readOnce.withLock({ first in defer { first = false }; return first }) else {
                never.wait()
                return
            }
            // Mailbox 0 holds a thread, so the calls behind it queue up as a busy worker's do.
            executor.submit(mailboxes[0]) {
                gate.wait()
                record.singles.withLock { $0.append("a") }
                record.done.signal()
            }
            func call(_ mailbox: Int, _ name: String, key: UInt) {
                executor.submit(mailboxes[mailbox], batch: (key: key, item: name)) {
                    record.singles.withLock { $0.append(name) }
                    record.done.signal()
                }
            }
            call(1, "b1", key: 7)
            call(1, "b2", key: 7)
            call(2, "c1", key: 7)
            call(3, "d1", key: 7)
            call(4, "e1", key: 7)
            call(5, "f1", key: 8)
        }
        for _ in 0 ..< 6 { #expect(record.done.wait(timeout: .now() + 30) == .success) }
        gate.signal()
        #expect(record.done.wait(timeout: .now() + 30) == .success)
        #expect(record.batches.withLock { $0 } == [["b1", "c1", "d1"], ["b2", "e1"]])
        #expect(record.singles.withLock { $0 }.sorted() == ["a", "f1"])
    }
}
