/// The labels a device holds a fixed time after it first saw each moment labelled: "live DER" scores
/// the first labels (settle 0), the final DER the last ones; in between is what a client that shows a
/// label as tentative for `settleSeconds` before treating it as settled would show. Why: live labels are
/// revised by live re-clustering passes and by finalize, and how soon a wrong first label is put right
/// says which of the two fixes it, and what a display delay would buy (docs/accuracy.md, "How long live
/// labels take to settle").
///
/// Time is the session's audio clock: `update(nowSeconds:changes:)` is called after each push with the
/// audio pushed so far and the turns published by it (new, revised or removed, by id), and once after
/// finalize with the same clock. A grid of `stepSeconds` points stands for the session; a point takes the
/// label of the turn covering its centre (several: the earliest start, then the id in text order). Pure; any
/// thread.
public struct SettledLabels: Sendable {
    /// One published turn, as `DiarizerTurn` carries it (a removal names the turn and its last span).
    public struct Change: Sendable, Equatable {
        public var id: String
        public var speaker: String
        public var startSeconds: Double
        public var endSeconds: Double
        public var isRemoved: Bool

        public init(id: String, speaker: String, startSeconds: Double, endSeconds: Double, isRemoved: Bool = false) {
            self.id = id
            self.speaker = speaker
            self.startSeconds = startSeconds
            self.endSeconds = endSeconds
            self.isRemoved = isRemoved
        }
    }

    public let stepSeconds: Double
    private var turns: [String: Change] = [:]
    /// Per grid point, the label it has had, each with the audio time it took it, oldest first; a nil
    /// label is a point no turn covers any more.
    private var history: [[(atSeconds: Double, speaker: String?)]] = []

    public init(stepSeconds: Double = 0.05) {
        precondition(stepSeconds > 0, "a grid step must be positive")
        self.stepSeconds = stepSeconds
    }

    private func centre(_ point: Int) -> Double { (Double(point) + 0.5) * stepSeconds }

    /// Applies one push's (or finalize's) published turns at audio time `nowSeconds`.
    public mutating func update(nowSeconds: Double, changes: [Change]) {
        var touched: [(Double, Double)] = []
        for change in changes {
            if let old = turns[change.id] { touched.append((old.startSeconds, old.endSeconds)) }
            touched.append((change.startSeconds, change.endSeconds))
            turns[change.id] = change.isRemoved ? nil : change
        }
        guard let reach = touched.map(\.1).max() else { return }
        let needed = Int((reach / stepSeconds).rounded(.up)) + 1
        if history.count < needed { history += Array(repeating: [], count: needed - history.count) }
        // Only the points inside a span that changed can have changed label.
        let current = turns.values.sorted { ($0.startSeconds, $0.id) < ($1.startSeconds, $1.id) }
        var points = Set<Int>()
        for (start, end) in touched where end > start {
            let first = max(0, Int((start / stepSeconds - 0.5).rounded(.down)))
            let last = min(history.count - 1, Int((end / stepSeconds).rounded(.up)))
            if first <= last { points.formUnion(first ... last) }
        }
        for point in points {
            let t = centre(point)
            let speaker = current.first { $0.startSeconds <= t && t < $0.endSeconds }?.speaker
            if let latest = history[point].last {
                if latest.speaker != speaker { history[point].append((nowSeconds, speaker)) }
            } else if let speaker {
                history[point].append((nowSeconds, speaker))
            }
        }
    }

    /// The session's labels `settleSeconds` after each point was first labelled (the latest change at or
    /// before that time), as segments; points never labelled, or unlabelled by then, are left out.
    public func segments(settleSeconds: Double) -> [SpeakerSegment] {
        var result: [SpeakerSegment] = []
        for (point, changes) in history.enumerated() {
            guard let first = changes.first else { continue }
            let due = first.atSeconds + settleSeconds
            guard let speaker = changes.last(where: { $0.atSeconds <= due + 1e-9 })?.speaker else { continue }
            let start = Double(point) * stepSeconds, end = start + stepSeconds
            if let last = result.last, last.speaker == speaker, abs(last.endSeconds - start) < 1e-9 {
                result[result.count - 1].endSeconds = end
            } else {
                result.append(SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end))
            }
        }
        return result
    }
}
