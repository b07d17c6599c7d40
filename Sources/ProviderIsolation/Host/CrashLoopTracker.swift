/// When a provider that keeps crashing is held back: a crash loop is `threshold` crashes within
/// `windowSeconds`; the provider is then unavailable until `quarantineSeconds` after its last crash.
/// Between crashes, restarts wait `restartDelay(after:)`: doubling from `initialBackoffSeconds` with each
/// crash still inside the window, up to `maximumBackoffSeconds`. Pure: times are given, not read.
public struct CrashLoopTracker: Sendable {
    public var policy: CrashLoopPolicy
    /// Crash times still inside the window, oldest first.
    public private(set) var recentCrashes: [Double] = []
    /// Until when the provider is held back, if it is.
    public private(set) var quarantinedUntil: Double?
    public private(set) var lastReason: String?

    public init(policy: CrashLoopPolicy) {
        self.policy = policy
    }

    /// Records a crash at `now`; true when this crash starts (or extends) a quarantine.
    @discardableResult
    public mutating func recordCrash(at now: Double, reason: String) -> Bool {
        recentCrashes.removeAll { $0 <= now - policy.windowSeconds }
        recentCrashes.append(now)
        lastReason = reason
        guard recentCrashes.count >= policy.threshold else { return false }
        quarantinedUntil = now + policy.quarantineSeconds
        return true
    }

    /// Whether the provider is held back at `now`.
    public func isQuarantined(at now: Double) -> Bool {
        quarantinedUntil.map { now < $0 } ?? false
    }

    /// Seconds to wait before starting the worker again after the crashes so far.
    public func restartDelay(at now: Double) -> Double {
        let inWindow = recentCrashes.filter { $0 > now - policy.windowSeconds }.count
        guard inWindow > 0 else { return 0 }
        let delay = policy.initialBackoffSeconds * Double(1 << min(inWindow - 1, 20))
        return min(policy.maximumBackoffSeconds, delay)
    }

    /// What `/v1/providers` and a refused session say while quarantined.
    public func unavailableReason(at now: Double) -> String? {
        guard let until = quarantinedUntil, now < until else { return nil }
        let last = lastReason.map { "; last: \($0)" } ?? ""
        return "crashed \(recentCrashes.count) times within \(Int(policy.windowSeconds)) s\(last); held back for \(Int((until - now).rounded(.up))) s more"
    }
}

/// The crash-loop and restart settings of process isolation. `.default`: 3 crashes in 60 s hold a
/// provider back for 120 s; restarts wait 0.5 s, 1 s, 2 s … at most 30 s.
public struct CrashLoopPolicy: Sendable, Hashable {
    public var threshold: Int
    public var windowSeconds: Double
    public var quarantineSeconds: Double
    public var initialBackoffSeconds: Double
    public var maximumBackoffSeconds: Double

    public init(threshold: Int, windowSeconds: Double, quarantineSeconds: Double, initialBackoffSeconds: Double,
                maximumBackoffSeconds: Double) {
        self.threshold = threshold
        self.windowSeconds = windowSeconds
        self.quarantineSeconds = quarantineSeconds
        self.initialBackoffSeconds = initialBackoffSeconds
        self.maximumBackoffSeconds = maximumBackoffSeconds
    }

    public static let `default` = CrashLoopPolicy(
        threshold: 3, windowSeconds: 60, quarantineSeconds: 120, initialBackoffSeconds: 0.5, maximumBackoffSeconds: 30)
}
