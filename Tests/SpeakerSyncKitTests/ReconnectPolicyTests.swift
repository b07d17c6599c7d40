import Testing
@testable import SpeakerSyncKit

@Suite struct ReconnectPolicyTests {
    @Test func delaysGrowExponentiallyUpToTheCapWithJitterBelowTheBackoff() {
        let policy = ReconnectPolicy(initialDelaySeconds: 0.5, maxDelaySeconds: 8, multiplier: 2, jitter: 0.5)
        #expect(policy.delay(attempt: 1, unit: 1) == 0.5)
        #expect(policy.delay(attempt: 2, unit: 1) == 1)
        #expect(policy.delay(attempt: 4, unit: 1) == 4)
        #expect(policy.delay(attempt: 5, unit: 1) == 8)
        #expect(policy.delay(attempt: 50, unit: 1) == 8)
        // Half the delay is random: between 50 % and 100 % of the backoff.
        #expect(policy.delay(attempt: 4, unit: 0) == 2)
        #expect(policy.delay(attempt: 4, unit: 0.5) == 3)
    }

    @Test func neverAndBoundedPoliciesGiveUp() {
        #expect(ReconnectPolicy.never.delay(attempt: 1, unit: 0.3) == nil)
        let three = ReconnectPolicy(maxAttempts: 3)
        #expect(three.delay(attempt: 3, unit: 0.3) != nil)
        #expect(three.delay(attempt: 4, unit: 0.3) == nil)
        #expect(ReconnectPolicy.default.delay(attempt: 10_000, unit: 0.3) != nil)
    }
}
