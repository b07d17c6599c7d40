import Testing
@testable import ProviderIsolation

/// When a crashing provider is restarted, and when it is held back: times are given, so these run
/// the policy exactly.
@Suite struct CrashLoopTrackerTests {
    let policy = CrashLoopPolicy(threshold: 3, windowSeconds: 60, quarantineSeconds: 120, initialBackoffSeconds: 0.5, maximumBackoffSeconds: 30)

    @Test func restartsBackOffAndThreeCrashesInAMinuteHoldTheProviderBack() {
        var tracker = CrashLoopTracker(policy: policy)
        #expect(tracker.restartDelay(at: 0) == 0)
        let first = tracker.recordCrash(at: 10, reason: "signal 11")
        #expect(!first)
        #expect(tracker.restartDelay(at: 10) == 0.5)
        let second = tracker.recordCrash(at: 20, reason: "signal 11")
        #expect(!second)
        #expect(tracker.restartDelay(at: 20) == 1)
        #expect(!tracker.isQuarantined(at: 20))
        #expect(tracker.unavailableReason(at: 20) == nil)
        let third = tracker.recordCrash(at: 69, reason: "signal 6 (SIGABRT)")
        #expect(third)
        #expect(tracker.isQuarantined(at: 69))
        #expect(tracker.isQuarantined(at: 188.9))
        #expect(!tracker.isQuarantined(at: 189))
        let reason = tracker.unavailableReason(at: 100)
        #expect(reason == "crashed 3 times within 60 s; last: signal 6 (SIGABRT); held back for 89 s more")
    }

    @Test func crashesOutsideTheWindowAreForgotten() {
        var tracker = CrashLoopTracker(policy: policy)
        tracker.recordCrash(at: 0, reason: "a")
        tracker.recordCrash(at: 50, reason: "b")
        let third = tracker.recordCrash(at: 61, reason: "c")
        #expect(!third)   // the crash at 0 left the window
        #expect(tracker.recentCrashes == [50, 61])
        #expect(tracker.restartDelay(at: 200) == 0)
    }

    @Test func backoffIsCapped() {
        var tracker = CrashLoopTracker(policy: CrashLoopPolicy(threshold: 100, windowSeconds: 1000, quarantineSeconds: 1,
                                                              initialBackoffSeconds: 0.5, maximumBackoffSeconds: 30))
        for second in 0 ..< 20 { tracker.recordCrash(at: Double(second), reason: "x") }
        #expect(tracker.restartDelay(at: 20) == 30)
    }
}
