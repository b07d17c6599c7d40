/// Whether an HTTP request body arrives fast enough: within a deadline in all, and at no less than a
/// minimum rate over each window. Pure logic (the caller passes the clock); one per body being read.
struct BodyPace: Equatable {
    let deadlineSeconds: Double
    let minimumBytesPerSecond: Double
    let windowSeconds: Double
    let startedAt: Double
    private(set) var windowStartedAt: Double
    private(set) var bytesAtWindowStart = 0

    init(deadlineSeconds: Int, minimumBytesPerSecond: Int, windowSeconds: Int, now: Double) {
        self.deadlineSeconds = Double(deadlineSeconds)
        self.minimumBytesPerSecond = Double(minimumBytesPerSecond)
        self.windowSeconds = Double(windowSeconds)
        self.startedAt = now
        self.windowStartedAt = now
    }

    enum Verdict: Equatable {
        /// Fine so far; check again after this many seconds.
        case checkAgain(afterSeconds: Double)
        /// Too slow: the reason, for the 408's message.
        case tooSlow(String)
    }

    /// Judges the body at `now`, `bytes` of it received; starts the next window when one has ended.
    mutating func check(now: Double, bytes: Int) -> Verdict {
        if now - startedAt >= deadlineSeconds {
            return .tooSlow("the request body did not arrive within \(Int(deadlineSeconds)) s")
        }
        let windowElapsed = now - windowStartedAt
        if windowElapsed >= windowSeconds {
            if minimumBytesPerSecond > 0, Double(bytes - bytesAtWindowStart) < minimumBytesPerSecond * windowElapsed {
                return .tooSlow("the request body arrived slower than \(Int(minimumBytesPerSecond)) bytes per second")
            }
            windowStartedAt = now
            bytesAtWindowStart = bytes
        }
        let untilWindowEnds = windowStartedAt + windowSeconds - now
        let untilDeadline = startedAt + deadlineSeconds - now
        return .checkAgain(afterSeconds: max(0.001, min(untilWindowEnds, untilDeadline)))
    }
}
