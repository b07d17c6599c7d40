import Testing
@testable import ProviderPluginKit

@Suite struct PluginTurnOutboxTests {
    static func turn(_ id: UInt64, _ speaker: Int32, _ start: Double, _ end: Double) -> PluginTurn {
        PluginTurn(id: id, speaker: speaker, startSeconds: start, endSeconds: end, confidence: 0.9)
    }

    @Test func revisionsReplaceTheQueuedChangeAndPullsComeInIdOrder() {
        var outbox = PluginTurnOutbox()
        outbox.publish(Self.turn(2, 0, 1, 2))
        outbox.publish(Self.turn(1, 1, 0, 1))
        outbox.publish(Self.turn(2, 0, 1, 3))
        #expect(outbox.pull() == [Self.turn(1, 1, 0, 1), Self.turn(2, 0, 1, 3)])
        #expect(outbox.pull().isEmpty)
        #expect(outbox.current.count == 2)
    }

    @Test func aWithdrawnTurnIsRemovedOnlyIfTheHostHasIt() {
        var outbox = PluginTurnOutbox()
        outbox.publish(Self.turn(1, 0, 0, 1))
        _ = outbox.pull()
        outbox.publish(Self.turn(2, 0, 1, 2))
        outbox.withdraw(1)
        outbox.withdraw(2)  // never pulled: its queued change is dropped, no removal sent
        let pulled = outbox.pull()
        #expect(pulled.map(\.id) == [1])
        #expect(pulled.first?.isRemoved == true)
        #expect(outbox.current.isEmpty)
        // Withdrawn and pulled: the host no longer has it, so a second withdrawal sends nothing.
        outbox.withdraw(1)
        #expect(outbox.pull().isEmpty)
    }

    @Test func publishingARemovedTurnWithdrawsIt() {
        var outbox = PluginTurnOutbox()
        outbox.publish(Self.turn(7, 0, 0, 1))
        _ = outbox.pull()
        var removed = Self.turn(7, 0, 0, 1)
        removed.isRemoved = true
        outbox.publish(removed)
        #expect(outbox.pull().map(\.isRemoved) == [true])
    }
}
