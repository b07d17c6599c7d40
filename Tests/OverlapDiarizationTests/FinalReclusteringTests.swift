@testable import OverlapDiarization
import Testing

@Suite struct FinalReclusteringTests {
    @Test func tidyJoinsShortGapsAndDropsSlivers() {
        let turns = [FinalReclustering.Turn(cluster: 0, startSeconds: 0, endSeconds: 1, confidence: 1),
                     FinalReclustering.Turn(cluster: 0, startSeconds: 1.05, endSeconds: 2, confidence: 1),
                     FinalReclustering.Turn(cluster: 1, startSeconds: 3, endSeconds: 3.01, confidence: 1)]
        let tidy = FinalReclustering.tidy(turns, joinGapSeconds: 0.1, minimumSeconds: 0.05)
        #expect(tidy == [FinalReclustering.Turn(cluster: 0, startSeconds: 0, endSeconds: 2, confidence: 1)])
    }
}
