/// Which queued steps the store writer's next drain takes.
///
/// A step that carries whole labellings (a session's end: every turn and every word's label) costs
/// PostgreSQL several times what a words step does. When many sessions end together, drains full of
/// them took 100–140 ms each, and a words step queued behind them waited for one such drain in flight
/// and then shared the next: half of the latency of the words a device sends with its `stop`
/// (docs/benchmarks.md, "500 device sessions: session ends capped per drain, and a load generator on a
/// shared clock"). So a drain takes at most `heavyLimit` heavy steps; a heavy step past the limit waits
/// for a later drain, and so does every later step of its conversation, so a conversation's steps still
/// commit in the order they were queued (what the acknowledgement contract rests on). Other
/// conversations' light steps go ahead.
///
/// While light steps are queued the limit is lower (`heavyLimitBesideLight`): words are what a device
/// waits on, a session's end can wait a few drains, and once the words are out a drain of ends alone
/// takes up to `heavyLimit` of them.
enum DrainSelection {
    /// Splits `items` (in queue order) into the drain taken now and what stays queued, both in queue
    /// order. Never takes nothing from a non-empty queue: the first item is always taken.
    /// `heavyLimitBesideLight` (nil: `heavyLimit`) applies when the queue holds a light step.
    static func split<Item>(_ items: [Item], heavyLimit: Int, heavyLimitBesideLight: Int? = nil,
                            conversation: (Item) -> String, isHeavy: (Item) -> Bool) -> (taken: [Item], left: [Item]) {
        let limit = heavyLimitBesideLight.map { besideLight in items.contains { !isHeavy($0) } ? besideLight : heavyLimit } ?? heavyLimit
        var taken: [Item] = []
        var left: [Item] = []
        var heavyTaken = 0
        var deferred = Set<String>()
        taken.reserveCapacity(items.count)
        for item in items {
            let id = conversation(item)
            if !deferred.isEmpty, deferred.contains(id) {
                left.append(item)
                continue
            }
            if isHeavy(item) {
                if heavyTaken >= max(1, limit) {
                    deferred.insert(id)
                    left.append(item)
                    continue
                }
                heavyTaken += 1
            }
            taken.append(item)
        }
        return (taken, left)
    }
}

extension PersistStep {
    /// Carries whole labellings (a session's end): a heavy step for `DrainSelection`.
    var isHeavyForDrain: Bool { !labellings.isEmpty }
}
