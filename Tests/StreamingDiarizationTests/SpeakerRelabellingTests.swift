import StreamingDiarization
import Testing

@Suite struct SpeakerRelabellingTests {
    typealias Span = SpeakerRelabelling.Span

    @Test func speakersKeepTheLabelsTheyOverlapMost() {
        let earlier = [Span(speaker: 0, startSeconds: 0, endSeconds: 5), Span(speaker: 1, startSeconds: 5, endSeconds: 10),
                       Span(speaker: 0, startSeconds: 10, endSeconds: 12)]
        // The new pass numbers them the other way round, splits a third voice off the end.
        let new = [Span(speaker: 7, startSeconds: 0, endSeconds: 4.8), Span(speaker: 3, startSeconds: 5.2, endSeconds: 10),
                   Span(speaker: 9, startSeconds: 10, endSeconds: 12)]
        let labels = SpeakerRelabelling.labels(for: new, earlier: earlier)
        #expect(labels[7] == 0)
        #expect(labels[3] == 1)
        // Speaker 9 overlaps old 0, but 0 went to speaker 7 (more overlap): a new label above all.
        #expect(labels[9] == 2)
    }

    @Test func newLabelsStayAboveReservedOnes() {
        let labels = SpeakerRelabelling.labels(
            for: [Span(speaker: 0, startSeconds: 0, endSeconds: 1), Span(speaker: 1, startSeconds: 1, endSeconds: 2)],
            earlier: [], reserved: [1_000_000, 2_000_001])
        #expect(labels == [0: 2_000_002, 1: 2_000_003])
    }

    @Test func aTouchIsNotAMatch() {
        let labels = SpeakerRelabelling.labels(
            for: [Span(speaker: 5, startSeconds: 0.95, endSeconds: 3)], earlier: [Span(speaker: 2, startSeconds: 0, endSeconds: 1)])
        #expect(labels == [5: 3])
    }
}
