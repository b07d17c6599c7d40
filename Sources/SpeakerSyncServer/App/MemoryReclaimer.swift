import Dispatch
import Foundation
import Synchronization

/// Gives freed memory back to the system after sessions end. glibc keeps what threads free in its
/// arenas for reuse and returns little of it on its own, so after a burst (a client that sent far
/// more than it read, a hundred sessions ending) the server's resident size would stay at its peak.
/// `malloc_trim(0)` releases the free pages of every arena; it runs once things have been quiet for
/// a moment (it walks the heaps, so not on every close).
final class MemoryReclaimer: Sendable {
    static let shared = MemoryReclaimer()

    private let queue = DispatchQueue(label: "speakersync.memory-reclaimer", qos: .utility)
    private let generation = Atomic<Int>(0)
    /// Quiet time after the last close before trimming.
    private let delaySeconds = 1.0

    /// A connection ended: trim once no other has ended for `delaySeconds`.
    func connectionClosed() {
        let mine = generation.add(1, ordering: .relaxed).newValue
        queue.asyncAfter(deadline: .now() + delaySeconds) { [self] in
            guard generation.load(ordering: .relaxed) == mine else { return }
            trim()
        }
    }

    func trim() {
        _ = Self.mallocTrim?(0)
    }

    /// Sets glibc's allocator up for a server whose bursts must be given back (call once, before
    /// the threads start; an operator's `MALLOC_ARENA_MAX` / `MALLOC_MMAP_THRESHOLD_` wins).
    /// - At most one arena per core (glibc's default is eight per core): what one thread frees stays
    ///   in that thread's arena, so with dozens of arenas a burst leaves partly used pages in each,
    ///   which `malloc_trim` cannot return.
    /// - A fixed mmap threshold of 128 KiB: glibc otherwise raises it (up to 32 MiB) each time a big
    ///   block is freed, after which a session's large arrays (its transcript, latency table,
    ///   outgoing messages) come from the heap and their pages stay there.
    /// Measured with `speakersync-bench slow-clients` (docs/reliability.md).
    static func configureAllocator(coreCount: Int = ProcessInfo.processInfo.activeProcessorCount) {
        guard let mallopt = mallopt else { return }
        let environment = ProcessInfo.processInfo.environment
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(arenaMaxParameter, Int32(max(2, coreCount))) }
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(mmapThresholdParameter, 128 << 10) }
    }

    /// `M_ARENA_MAX` and `M_MMAP_THRESHOLD` from glibc's malloc.h.
    private static let arenaMaxParameter: Int32 = -8
    private static let mmapThresholdParameter: Int32 = -3

    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    /// glibc's `malloc_trim`, which Swift's Glibc module does not expose (a GNU extension); nil
    /// with another C library.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
