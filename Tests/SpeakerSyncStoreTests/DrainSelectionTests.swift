import DeterministicRandom
import Testing
@testable import SpeakerSyncStore

/// The writer's drain selection as a pure function: what a drain takes when many sessions end together.
@Suite struct DrainSelectionTests {
    struct Step: Equatable {
        var conversation: String
        var heavy: Bool
        var serial: Int
    }

    static func split(_ steps: [Step], limit: Int) -> (taken: [Step], left: [Step]) {
        DrainSelection.split(steps, heavyLimit: limit, conversation: \.conversation, isHeavy: \.heavy)
    }

    @Test func underTheLimitADrainTakesEverythingInQueueOrder() {
        let steps = [Step(conversation: "a", heavy: false, serial: 0), Step(conversation: "b", heavy: true, serial: 1),
                     Step(conversation: "a", heavy: true, serial: 2), Step(conversation: "c", heavy: false, serial: 3)]
        let (taken, left) = Self.split(steps, limit: 2)
        #expect(taken == steps)
        #expect(left.isEmpty)
    }

    @Test func pastTheLimitAHeavyStepWaitsWithTheRestOfItsConversationWhileOthersGoAhead() {
        let steps = [
            Step(conversation: "a", heavy: true, serial: 0),
            Step(conversation: "b", heavy: true, serial: 1),   // past a limit of 1: waits
            Step(conversation: "c", heavy: false, serial: 2),  // another conversation's words: goes ahead
            Step(conversation: "b", heavy: false, serial: 3),  // b's later words: wait behind b's end
            Step(conversation: "a", heavy: false, serial: 4),  // a's end was taken: a's later step goes too
            Step(conversation: "d", heavy: true, serial: 5),   // past the limit: waits
        ]
        let (taken, left) = Self.split(steps, limit: 1)
        #expect(taken.map(\.serial) == [0, 2, 4])
        #expect(left.map(\.serial) == [1, 3, 5])
    }

    /// While words wait in the queue a drain takes fewer session ends (the words are what devices
    /// wait on); a queue of ends alone is drained at the full limit.
    @Test func besideLightStepsTheLowerLimitHoldsAndEndsAloneAreTakenAtTheFullLimit() {
        let ends = (0..<6).map { Step(conversation: "e\($0)", heavy: true, serial: $0) }
        let words = [Step(conversation: "w", heavy: false, serial: 6)]
        let (mixed, mixedLeft) = DrainSelection.split(ends + words, heavyLimit: 4, heavyLimitBesideLight: 2,
                                                      conversation: \.conversation, isHeavy: \.heavy)
        #expect(mixed.map(\.serial) == [0, 1, 6])
        #expect(mixedLeft.map(\.serial) == [2, 3, 4, 5])
        let (alone, aloneLeft) = DrainSelection.split(mixedLeft, heavyLimit: 4, heavyLimitBesideLight: 2,
                                                      conversation: \.conversation, isHeavy: \.heavy)
        #expect(alone.map(\.serial) == [2, 3, 4, 5])
        #expect(aloneLeft.isEmpty)
    }

    @Test func aDrainAlwaysTakesTheFirstStepEvenWithALimitOfZero() {
        let steps = [Step(conversation: "a", heavy: true, serial: 0), Step(conversation: "b", heavy: true, serial: 1)]
        let (taken, left) = Self.split(steps, limit: 0)
        #expect(taken.map(\.serial) == [0])
        #expect(left.map(\.serial) == [1])
    }

    /// Drained over and over, a random queue empties, no drain holds more heavy steps than the limit,
    /// and each conversation's steps come out in the order they were queued.
    @Test(arguments: [1, 3, 8])
    func repeatedDrainsKeepEachConversationsOrderAndTheLimit(limit: Int) {
        var random = SeededRandom(seed: 4242 + UInt64(limit))
        var queue = (0..<400).map { serial in
            Step(conversation: "c\(Int.random(in: 0..<25, using: &random))", heavy: Int.random(in: 0..<4, using: &random) == 0, serial: serial)
        }
        var committed: [Step] = []
        var drains = 0
        while !queue.isEmpty, drains < 1_000 {
            let (taken, left) = Self.split(queue, limit: limit)
            #expect(!taken.isEmpty)
            #expect(taken.filter(\.heavy).count <= limit)
            committed += taken
            queue = left
            drains += 1
        }
        #expect(queue.isEmpty)
        #expect(committed.count == 400)
        for conversation in Set(committed.map(\.conversation)) {
            let serials = committed.filter { $0.conversation == conversation }.map(\.serial)
            #expect(serials == serials.sorted(), "conversation \(conversation) out of order")
        }
    }
}
