/// When to try again after a connection is lost: exponential backoff with jitter, so a server that
/// comes back is not hit by every device at the same instant.
public struct ReconnectPolicy: Sendable, Equatable {
    /// Delay before the first retry.
    public var initialDelaySeconds: Double
    /// Upper bound of the delay.
    public var maxDelaySeconds: Double
    /// Growth per failed attempt.
    public var multiplier: Double
    /// Share of the delay that is random (0: none; 0.5: the delay is 50–100 % of the backoff).
    public var jitter: Double
    /// Attempts in a row before giving up; nil: never give up (a device keeps its data until the
    /// server is back). 0: never reconnect (one connection, as a test of a single session wants).
    public var maxAttempts: Int?

    public init(initialDelaySeconds: Double = 0.25, maxDelaySeconds: Double = 30, multiplier: Double = 2,
                jitter: Double = 0.5, maxAttempts: Int? = nil) {
        self.initialDelaySeconds = initialDelaySeconds
        self.maxDelaySeconds = maxDelaySeconds
        self.multiplier = multiplier
        self.jitter = jitter
        self.maxAttempts = maxAttempts
    }

    public static let `default` = ReconnectPolicy()
    /// One connection only: a drop ends the session (`SessionOutcome.stopped`).
    public static let never = ReconnectPolicy(maxAttempts: 0)

    /// Delay before attempt `attempt` (1-based); `unit` is a random number in 0..<1. nil: give up.
    public func delay(attempt: Int, unit: Double) -> Double? {
        if let maxAttempts, attempt > maxAttempts { return nil }
        var backoff = initialDelaySeconds
        for _ in 1..<max(1, attempt) {
            backoff *= multiplier
            if backoff >= maxDelaySeconds { break }
        }
        backoff = min(backoff, maxDelaySeconds)
        let share = max(0, min(1, jitter))
        return backoff * (1 - share) + backoff * share * max(0, min(1, unit))
    }
}
