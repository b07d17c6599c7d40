/// A session's turns as it states them and what the host has not pulled yet, for providers that revise
/// and withdraw turns (sherpa-onnx's offline pass, Falcon's windows): a revision replaces the queued
/// change of the same id, and a withdrawal of a turn the host never pulled drops its queued change
/// instead of sending a removal the host would not understand.
///
/// Called on the session's queue only.
public struct PluginTurnOutbox {
    /// The turns as they stand (none withdrawn), by id.
    public private(set) var current: [UInt64: PluginTurn] = [:]
    private var pending: [UInt64: PluginTurn] = [:]
    /// Ids the host holds (pulled, not withdrawn): only those need a removal.
    private var delivered: Set<UInt64> = []

    public init() {}

    /// A new or revised turn, or (`isRemoved`) a withdrawal.
    public mutating func publish(_ turn: PluginTurn) {
        guard !turn.isRemoved else { return withdraw(turn.id) }
        current[turn.id] = turn
        pending[turn.id] = turn
    }

    public mutating func withdraw(_ id: UInt64) {
        current.removeValue(forKey: id)
        if delivered.contains(id) {
            pending[id] = PluginTurn(id: id, speaker: 0, startSeconds: 0, endSeconds: 0, confidence: 0, isRemoved: true)
        } else {
            pending.removeValue(forKey: id)
        }
    }

    /// The changes since the last pull, by id.
    public mutating func pull() -> [PluginTurn] {
        let turns = pending.values.sorted { $0.id < $1.id }
        pending.removeAll(keepingCapacity: true)
        for turn in turns {
            if turn.isRemoved { delivered.remove(turn.id) } else { delivered.insert(turn.id) }
        }
        return turns
    }
}
