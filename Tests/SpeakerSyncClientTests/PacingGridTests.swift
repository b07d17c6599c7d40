import Testing
@testable import SpeakerSyncClient

/// The load generator's shared send clock: due times rounded up to one grid, never earlier.
@Suite struct PacingGridTests {
    @Test func withoutATickADueTimeIsKept() {
        let due = ContinuousClock.now + .milliseconds(37)
        #expect(PacingGrid.tick(atOrAfter: due, tickSeconds: nil) == due)
        #expect(PacingGrid.tick(atOrAfter: due, tickSeconds: 0) == due)
    }

    @Test func dueTimesWithinOneTickWakeTogetherAndNeverEarly() {
        let base = PacingGrid.tick(atOrAfter: ContinuousClock.now + .seconds(1), tickSeconds: 0.01)
        // Three streamers due at different instants inside the same 10 ms tick.
        let dues = [base + .milliseconds(1), base + .microseconds(5_500), base + .microseconds(9_900)]
        let ticks = dues.map { PacingGrid.tick(atOrAfter: $0, tickSeconds: 0.01) }
        #expect(Set(ticks).count == 1)
        for (due, tick) in zip(dues, ticks) {
            #expect(tick >= due)
            #expect(tick - due < .milliseconds(10))
        }
        // The next tick's due time goes to the next tick.
        let later = PacingGrid.tick(atOrAfter: base + .microseconds(10_100), tickSeconds: 0.01)
        #expect(later - ticks[0] > .milliseconds(9) && later - ticks[0] < .milliseconds(11))
    }
}
