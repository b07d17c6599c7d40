import Foundation
import Synchronization
import Testing
@testable import ResourcePooling

@Suite struct ResourcePoolTests {
    struct MakeFailure: Error {}

    final class Counters: Sendable {
        let made = Atomic<Int>(1)
        let busy = Atomic<Int>(0)
        let mostBusy = Atomic<Int>(0)
    }

    @Test func resourcesAreMadeOnlyWhenAllAreBusyAndNeverBeyondTheMaximum() async throws {
        let counters = Counters()
        let pool = ResourcePool<Int, MakeFailure>(first: 0, maximum: 3) { () throws(MakeFailure) -> Int in
            counters.made.add(1, ordering: .relaxed).newValue - 1
        }
        // One caller at a time reuses the first resource.
        for _ in 0 ..< 5 { _ = try pool.withResource { (resource) throws(MakeFailure) in resource } }
        #expect(counters.made.load(ordering: .relaxed) == 1)
        // Eight threads at once: at most three resources, each used by one caller at a time.
        let threads = (0 ..< 8).map { _ in
            Thread {
                _ = try? pool.withResource { (resource) throws(MakeFailure) -> Int in
                    let now = counters.busy.add(1, ordering: .relaxed).newValue
                    _ = counters.mostBusy.max(now, ordering: .relaxed)
                    usleep(20_000)
                    counters.busy.subtract(1, ordering: .relaxed)
                    return resource
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { usleep(5_000) }
        #expect(counters.made.load(ordering: .relaxed) <= 3)
        #expect(counters.mostBusy.load(ordering: .relaxed) <= 3)
        #expect(counters.mostBusy.load(ordering: .relaxed) >= 1)
    }

    @Test func aResourceThatCannotBeMadeIsTheCallersErrorAndFreesItsPlace() throws {
        let pool = ResourcePool<Int, MakeFailure>(first: 0, maximum: 2) { () throws(MakeFailure) -> Int in throw MakeFailure() }
        // The first is lent; a nested caller needs a second, whose making fails.
        try pool.withResource { (_) throws(MakeFailure) in
            #expect(throws: MakeFailure.self) { try pool.withResource { (resource) throws(MakeFailure) in resource } }
            #expect(throws: MakeFailure.self) { try pool.withResource { (resource) throws(MakeFailure) in resource } }
        }
        #expect(try pool.withResource { (resource) throws(MakeFailure) in resource } == 0)
    }

    /// Made on first use: nothing before, a failure not remembered (the next call tries again), then
    /// one resource reused by callers one at a time.
    @Test func aLazyPoolMakesItsFirstResourceWhenFirstUsed() throws {
        let attempts = Atomic<Int>(0)
        let pool = ResourcePool<Int, MakeFailure>(maximum: 2) { () throws(MakeFailure) -> Int in
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            if attempt == 1 { throw MakeFailure() }
            return attempt
        }
        #expect(pool.madeCount == 0 && attempts.load(ordering: .relaxed) == 0)
        #expect(throws: MakeFailure.self) { try pool.withResource { (resource) throws(MakeFailure) in resource } }
        #expect(pool.madeCount == 0)
        #expect(try pool.withResource { (resource) throws(MakeFailure) in resource } == 2)
        #expect(try pool.withResource { (resource) throws(MakeFailure) in resource } == 2)
        #expect(pool.madeCount == 1 && attempts.load(ordering: .relaxed) == 2)
    }
}
