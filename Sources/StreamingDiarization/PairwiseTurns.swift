/// Which pairs of clusters finalize's turn-taking test requires to alternate
/// (`DiarizerConfig.pairwiseTurns`, `SmoothedKMeans.Config.pairwiseTurns`): each of the two returns at
/// least `minimumTurns` times with the other in between, the rest of the meeting left out.
///
/// Why it exists: a voice that drifts across a meeting can split into an early and a late cluster
/// that each return among other people's turns, so the test counts two people; the two halves never
/// alternate with each other. Why it is off: people who happen not to alternate in a short meeting
/// fail it too, and on synthetic meetings nobody tuned on it lost a real speaker (docs/accuracy.md,
/// voices that drift).
public enum PairwiseTurns: String, Sendable, Equatable, CaseIterable {
    /// The test as before: turns are counted over the whole sequence of labels.
    case off
    /// Every pair of clusters must alternate.
    case everyPair = "every"
    /// The pair whose centres are most alike must alternate: where one voice split in two would be.
    case nearestPair = "nearest"
}
