@testable import OverlapDiarization
import Testing

@Suite struct FinalReclusteringTests {
    /// Local speakers onto distinct clusters with the least total distance, not greedily.
    @Test func oneToOneMinimisesTheTotal() {
        // Greedy would give row 0 column 0 (0.1), leaving row 1 with column 1 (0.9): total 1.0.
        // The best is row 0 → 1 (0.2), row 1 → 0 (0.15): total 0.35.
        #expect(FinalReclustering.oneToOne([[0.1, 0.2], [0.15, 0.9]]) == [1, 0])
        // More rows than columns: the extra row takes its nearest column.
        #expect(FinalReclustering.oneToOne([[0.1], [0.3]]).count == 2)
    }

    @Test func tidyJoinsShortGapsAndDropsSlivers() {
        let turns = [FinalReclustering.Turn(cluster: 0, startSeconds: 0, endSeconds: 1, confidence: 1),
                     FinalReclustering.Turn(cluster: 0, startSeconds: 1.05, endSeconds: 2, confidence: 1),
                     FinalReclustering.Turn(cluster: 1, startSeconds: 3, endSeconds: 3.01, confidence: 1)]
        let tidy = FinalReclustering.tidy(turns, joinGapSeconds: 0.1, minimumSeconds: 0.05)
        #expect(tidy == [FinalReclustering.Turn(cluster: 0, startSeconds: 0, endSeconds: 2, confidence: 1)])
    }
}
