import Testing
@testable import ProviderIsolation

/// The watchdog's arithmetic: a call's deadline counts from when it began running in the worker,
/// which is when the call before it on the same instance was answered.
@Suite struct CallLedgerTests {
    let deadlines = ProviderDeadlines(loadSeconds: 60, createSeconds: 30, pushSeconds: 10, finalizeSeconds: 120, embedVoiceSeconds: 60)

    @Test func aCallQueuedBehindASlowOneIsNotBlamedForItsTime() {
        var ledger = CallLedger()
        ledger.sent(.create, at: 0)
        ledger.sent(.push, at: 0.1, sampleCount: 1600)
        ledger.sent(.push, at: 0.2, sampleCount: 1600)
        #expect(ledger.pendingSampleCount == 3200)
        #expect(ledger.overdue(at: 29, deadlines: deadlines) == nil)
        // The create took 25 s: the first push has been running 5 s, not 25.
        let create = ledger.answered(at: 25)
        #expect(create?.call == .create)
        #expect(ledger.overdue(at: 30, deadlines: deadlines) == nil)
        let overdue = ledger.overdue(at: 35.5, deadlines: deadlines)
        #expect(overdue?.call == .push)
        #expect(overdue?.runningSeconds == 10.5)
        let push = ledger.answered(at: 36)
        #expect(push?.sampleCount == 1600)
        #expect(ledger.pendingSampleCount == 1600)
    }

    @Test func eachCallHasItsOwnDeadline() {
        var ledger = CallLedger()
        ledger.sent(.finalize, at: 0)
        #expect(ledger.overdue(at: 100, deadlines: deadlines) == nil)
        #expect(ledger.overdue(at: 121, deadlines: deadlines)?.call == .finalize)
        #expect(deadlines.seconds(for: .checkOptions) == deadlines.createSeconds)
    }

    @Test func abandoningForgetsEverything() {
        var ledger = CallLedger()
        for index in 0 ..< 100 { ledger.sent(.push, at: Double(index), sampleCount: 10) }
        for index in 0 ..< 70 { _ = ledger.answered(at: Double(index)) }
        #expect(ledger.pendingSampleCount == 300)
        #expect(ledger.oldest?.sentAt == 70)
        ledger.abandon()
        #expect(ledger.isEmpty)
        #expect(ledger.pendingSampleCount == 0)
        let nothing = ledger.answered(at: 200)
        #expect(nothing == nil)
        #expect(ledger.overdue(at: 1000, deadlines: deadlines) == nil)
    }
}
