import Testing
@testable import StreamingDiarization

@Suite struct WindowedTurnTrackerTests {
    typealias Segment = WindowedTurnTracker.Segment

    static func speakers(_ tracker: WindowedTurnTracker) -> [(Int, Double, Double)] {
        tracker.turns.values.sorted { $0.startSeconds < $1.startSeconds }.map { ($0.speaker, $0.startSeconds, $0.endSeconds) }
    }

    @Test func labelsStayWithTheVoiceAcrossWindowsWhoseTagsDiffer() {
        var tracker = WindowedTurnTracker()
        // Window 0-10 s: A (tag 0) then B (tag 1).
        _ = tracker.apply(windowStartSeconds: 0, windowEndSeconds: 10, segments: [
            Segment(tag: 0, startSeconds: 0, endSeconds: 5), Segment(tag: 1, startSeconds: 5, endSeconds: 10),
        ])
        #expect(Self.speakers(tracker).map(\.0) == [0, 1])
        // Window 5-15 s: the diarizer now calls B "0" and a new voice C "1".
        let changes = tracker.apply(windowStartSeconds: 5, windowEndSeconds: 15, segments: [
            Segment(tag: 0, startSeconds: 5, endSeconds: 11), Segment(tag: 1, startSeconds: 11, endSeconds: 15),
        ])
        let turns = Self.speakers(tracker)
        #expect(turns.map(\.0) == [0, 1, 2], "A keeps 0, B keeps 1 though tagged 0, C is new")
        #expect(turns.map(\.1) == [0, 5, 11])
        #expect(turns.map(\.2) == [5, 11, 15])
        // B's old turn (5-10) was removed and replaced; A's (0-5) untouched.
        #expect(changes.contains(.remove(1)))
        #expect(!changes.contains(.remove(0)))
    }

    @Test func aTurnCrossingTheWindowStartIsCutThereAndTheRestReplaced() {
        var tracker = WindowedTurnTracker()
        _ = tracker.apply(windowStartSeconds: 0, windowEndSeconds: 10, segments: [Segment(tag: 3, startSeconds: 1, endSeconds: 9)])
        let changes = tracker.apply(windowStartSeconds: 4, windowEndSeconds: 12, segments: [Segment(tag: 0, startSeconds: 4, endSeconds: 12)])
        // The first window's speaker got the first free label, 0; the second window's overlaps it.
        #expect(changes.first == .upsert(.init(id: 0, speaker: 0, startSeconds: 1, endSeconds: 4)))
        #expect(Self.speakers(tracker).map(\.0) == [0, 0])
        #expect(Self.speakers(tracker).map(\.2) == [4, 12])
    }

    @Test func sliversAndSegmentsOutsideTheWindowAreDroppedOrClipped() {
        var tracker = WindowedTurnTracker(minimumTurnSeconds: 0.1)
        _ = tracker.apply(windowStartSeconds: 10, windowEndSeconds: 20, segments: [
            Segment(tag: 0, startSeconds: 8, endSeconds: 12), Segment(tag: 1, startSeconds: 15, endSeconds: 15.05),
        ])
        #expect(Self.speakers(tracker).count == 1)
        #expect(Self.speakers(tracker).first?.1 == 10)
    }

    @Test func theFinalPassReplacesEveryTurnAndGivesAReturningVoiceItsFirstLabel() {
        var tracker = WindowedTurnTracker()
        // Live: A 0-12 (label 0), B 12-40 (label 1), A returns at 40 after 28 s: nothing to overlap, new label 2.
        _ = tracker.apply(windowStartSeconds: 0, windowEndSeconds: 20, segments: [
            Segment(tag: 0, startSeconds: 0, endSeconds: 12), Segment(tag: 1, startSeconds: 12, endSeconds: 20),
        ])
        _ = tracker.apply(windowStartSeconds: 15, windowEndSeconds: 50, segments: [
            Segment(tag: 0, startSeconds: 15, endSeconds: 40), Segment(tag: 1, startSeconds: 40, endSeconds: 50),
        ])
        #expect(Set(tracker.turns.values.map(\.speaker)) == [0, 1, 2])
        let before = Set(tracker.turns.keys)
        // The whole session at once: A is one tag (7) in both places, B another (8).
        let changes = tracker.replaceAll(with: [
            Segment(tag: 7, startSeconds: 0, endSeconds: 12), Segment(tag: 8, startSeconds: 12, endSeconds: 40),
            Segment(tag: 7, startSeconds: 40, endSeconds: 50),
        ])
        #expect(Set(changes.compactMap { if case .remove(let id) = $0 { id } else { nil } }) == before)
        #expect(Self.speakers(tracker).map(\.0) == [0, 1, 0])
    }

    @Test func anEmptyWindowRemovesTheTurnsItCovers() {
        var tracker = WindowedTurnTracker()
        _ = tracker.apply(windowStartSeconds: 0, windowEndSeconds: 10, segments: [Segment(tag: 0, startSeconds: 2, endSeconds: 6)])
        let changes = tracker.apply(windowStartSeconds: 0, windowEndSeconds: 15, segments: [])
        #expect(changes == [.remove(0)])
        #expect(tracker.turns.isEmpty)
    }
}
