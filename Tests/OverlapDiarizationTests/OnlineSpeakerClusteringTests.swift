import OverlapDiarization
import Testing

@Suite struct OnlineSpeakerClusteringTests {
    static func voice(_ index: Int, _ noise: Float = 0) -> [Float] {
        var vector = [Float](repeating: noise, count: 6)
        vector[index] = 1
        return vector
    }

    @Test func newVoicesGetNewSpeakersAndReturningOnesTheirOwn() {
        var clustering = OnlineSpeakerClustering()
        let config = OverlapDiarizerConfig.default
        let first = clustering.assign([.init(index: 0, embedding: Self.voice(0), cleanSeconds: 2),
                                       .init(index: 2, embedding: Self.voice(1), cleanSeconds: 2)], config: config)
        #expect(Set(first.values).count == 2)
        // The same two voices, numbered the other way round in the next window.
        let second = clustering.assign([.init(index: 1, embedding: Self.voice(1, 0.05), cleanSeconds: 2),
                                        .init(index: 0, embedding: Self.voice(0, 0.05), cleanSeconds: 2)], config: config)
        #expect(second[0] == first[0])
        #expect(second[1] == first[2])
        #expect(clustering.centroids.count == 2)
    }

    /// Two local speakers of one window never share a global speaker, even when both sound like it.
    @Test func oneWindowsLocalSpeakersAreDistinct() {
        var clustering = OnlineSpeakerClustering()
        let config = OverlapDiarizerConfig.default
        let known = clustering.assign([.init(index: 0, embedding: Self.voice(0), cleanSeconds: 2)], config: config)
        let both = clustering.assign([.init(index: 0, embedding: Self.voice(0, 0.1), cleanSeconds: 2),
                                      .init(index: 1, embedding: Self.voice(0, 0.2), cleanSeconds: 0.5)], config: config)
        #expect(both[0] == known[0])
        #expect(both[1] != nil && both[1] != known[0])
    }

    /// An enrolled person keeps their label, and a stranger does not take it.
    @Test func enrolledVoicesKeepTheirLabels() {
        var clustering = OnlineSpeakerClustering(known: [(speaker: 7, embedding: Self.voice(3), seconds: 20)])
        let config = OverlapDiarizerConfig.default
        let result = clustering.assign([.init(index: 0, embedding: Self.voice(3, 0.05), cleanSeconds: 1),
                                        .init(index: 1, embedding: Self.voice(4), cleanSeconds: 1)], config: config)
        #expect(result[0] == 7)
        #expect(result[1] == 8)
    }

    /// At the speaker limit, a new voice joins the nearest speaker not used in its window.
    @Test func theSpeakerLimitHolds() {
        var clustering = OnlineSpeakerClustering()
        var config = OverlapDiarizerConfig.default
        config.maximumSpeakers = 2
        _ = clustering.assign([.init(index: 0, embedding: Self.voice(0), cleanSeconds: 2), .init(index: 1, embedding: Self.voice(1), cleanSeconds: 2)], config: config)
        let third = clustering.assign([.init(index: 0, embedding: Self.voice(2), cleanSeconds: 2)], config: config)
        #expect(clustering.centroids.count == 2)
        #expect(third[0] != nil)
    }
}
