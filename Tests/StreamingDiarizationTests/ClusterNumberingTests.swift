import Testing
@testable import StreamingDiarization

/// Which online speaker's number each cluster of a re-clustering takes.
@Suite struct ClusterNumberingTests {
    typealias Frame = ClusterNumbering.Frame

    func frames(_ runs: [(cluster: Int, speaker: Int32?, count: Int)]) -> [Frame] {
        runs.flatMap { run in Array(repeating: Frame(cluster: run.cluster, speaker: run.speaker, seconds: 0.5), count: run.count) }
    }

    @Test func theVoiceANumberWasMadeForKeepsItThoughAnotherHasTalkedMoreUnderIt() {
        // Online speaker 1 holds cluster 0's voice (2 s) first, then cluster 1's (6 s): by shared speech
        // alone cluster 1 would take the number.
        let result = ClusterNumbering.speakers(of: frames([(0, 1, 4), (1, 1, 12), (0, 1, 2)]))
        #expect(result == [0: 1])
    }

    @Test func speakersClaimTheirFoundingVoiceInTheOrderTheyWereFirstHeard() {
        // Speaker 2 was founded by cluster 0's voice too (a split online), but later than speaker 1:
        // speaker 1 keeps cluster 0, and speaker 2 goes to cluster 1, which it shares the most with.
        let result = ClusterNumbering.speakers(of: frames([(0, 1, 4), (0, 2, 4), (1, 2, 6), (1, 1, 2)]))
        #expect(result == [0: 1, 1: 2])
    }

    @Test func leftOverPairsGoBySharedSpeechOneToOneAndFramesWithoutASpeakerCountForNothing() {
        // Speaker 1 founded on cluster 0; speaker 2 founded on cluster 0 as well (taken), so it goes by
        // shared speech: 3 s with cluster 2 against 1 s with cluster 1. Cluster 1 stays without one.
        let result = ClusterNumbering.speakers(of: frames([(0, 1, 4), (0, 2, 4), (2, 2, 6), (1, 2, 2), (1, nil, 20)]))
        #expect(result == [0: 1, 2: 2])
        #expect(ClusterNumbering.onlineSpeakers(of: frames([(0, 1, 1), (1, nil, 1), (1, 3, 1)])) == [1, 3])
    }

    @Test func theFoundingSpanIsTheSpeakersFirstSecondsOnly() {
        // Speaker 1: 1 s of cluster 0, then 1.5 s of cluster 1 (founding span 2 s: 1 s against 1 s, a tie
        // that goes to the lower cluster), then much more of cluster 1.
        #expect(ClusterNumbering.speakers(of: frames([(0, 1, 2), (1, 1, 3), (1, 1, 10)])) == [0: 1])
        // With a 3 s founding span cluster 1 holds most of it.
        #expect(ClusterNumbering.speakers(of: frames([(0, 1, 2), (1, 1, 3), (1, 1, 10)]), foundingSeconds: 3) == [1: 1])
    }
}
