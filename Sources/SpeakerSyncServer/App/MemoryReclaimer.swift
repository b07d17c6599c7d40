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

    /// glibc's `malloc_trim`, which Swift's Glibc module does not expose (a GNU extension); nil
    /// with another C library.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
