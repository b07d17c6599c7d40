import Synchronization

/// A token bucket per key (a credential): `ratePerSecond` requests on average, bursts up to `burst`.
/// Pure apart from its lock; the clock is passed in so tests step it.
public final class RateLimiter: Sendable {
    public let ratePerSecond: Double
    public let burst: Double

    private struct Bucket {
        var tokens: Double
        var updatedSeconds: Double
    }

    private let buckets = Mutex<[String: Bucket]>([:])
    /// Buckets idle long enough to be full again are dropped past this many keys.
    private let pruneAbove = 10_000

    public init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = max(1, burst)
    }

    /// Takes one token for `key` at `nowSeconds` (a monotonic clock). nil: allowed; otherwise the
    /// seconds until a token is available (for `Retry-After`).
    public func take(_ key: String, nowSeconds: Double) -> Double? {
        guard ratePerSecond > 0 else { return nil } // 0 turns the limit off
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updatedSeconds: nowSeconds)
            bucket.tokens = min(burst, bucket.tokens + max(0, nowSeconds - bucket.updatedSeconds) * ratePerSecond)
            bucket.updatedSeconds = nowSeconds
            defer {
                buckets[key] = bucket
                if buckets.count > pruneAbove {
                    let full = burst / ratePerSecond
                    buckets = buckets.filter { nowSeconds - $0.value.updatedSeconds < full }
                }
            }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / ratePerSecond }
            bucket.tokens -= 1
            return nil
        }
    }
}
