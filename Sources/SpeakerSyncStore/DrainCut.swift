/// Which queued steps a writer shard commits next, and which wait one transaction.
///
/// A step that carries whole labellings (a finalize or an interrupted session: turns, every word's
/// label, the stats document) costs a transaction far more than words or turns do. When hundreds of
/// sessions end at once, one drain of all of them would keep every other session's words waiting
/// for those labellings to commit, and a session's update waits for its words' commit. So a heavy
/// step not yet held back waits for the next drain, together with every later step of its
/// conversation (a conversation's steps keep their order); the light steps of other conversations
/// go now. A step is held back once at most, so a heavy step is never starved by a stream of light
/// ones: it goes with the next drain whatever arrives meanwhile. A queue of heavy steps only is
/// taken whole.
struct DrainCut: Equatable {
    struct Step {
        var conversationID: String
        var heavy: Bool
        var heldBack: Bool
    }

    /// Positions in the queue taken now, in queue order.
    var taken: [Int]
    /// Positions that wait for the next drain, in queue order (heavy ones among them are then held back).
    var kept: [Int]

    init(_ queue: [Step]) {
        var taken: [Int] = []
        var kept: [Int] = []
        var waiting = Set<String>()
        for (position, step) in queue.enumerated() {
            if waiting.contains(step.conversationID) {
                kept.append(position)
            } else if step.heavy && !step.heldBack {
                waiting.insert(step.conversationID)
                kept.append(position)
            } else {
                taken.append(position)
            }
        }
        if taken.isEmpty {
            taken = kept
            kept = []
        }
        self.taken = taken
        self.kept = kept
    }
}

extension PersistStep {
    /// Carries whole labellings: the steps `DrainCut` lets light ones pass.
    var isHeavy: Bool { !labellings.isEmpty }
}
