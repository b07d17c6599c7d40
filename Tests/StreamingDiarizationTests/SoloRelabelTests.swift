import Testing
@testable import StreamingDiarization

/// SoloRelabel on hand-built windows of 0.1 s frames (frame i's centre is start + 0.05 + 0.1·i).
struct SoloRelabelTests {
    typealias Span = OverlapTurns.Span

    static func rounded(_ spans: [Span]) -> [Span] { OverlapTurnsTests.rounded(spans) }

    /// The turns put the change from 7 to 3 at 1.0 s; the model hears local 0 alone until 1.3 s and local
    /// 1 alone after. 1.0–1.3 goes back to 7, and 3's turn starts at 1.3.
    @Test func aLateChangeOfSpeakerMovesToWhereTheModelHearsIt() {
        let masks: [UInt8] = (0 ..< 30).map { $0 < 13 ? 1 : 2 }
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 1), Span(speaker: 3, startSeconds: 1, endSeconds: 3)]
        let result = SoloRelabel.relabelled(turns, windows: [OverlapTurnsTests.window(masks)])
        #expect(result.pieces.map(Self.rounded) == [[turns[0]], [Span(speaker: 3, startSeconds: 1.3, endSeconds: 3)]])
        #expect(Self.rounded(result.given) == [Span(speaker: 7, startSeconds: 1.0, endSeconds: 1.3)])
    }

    /// A short reply inside someone else's turn: the turns give all of 0–3 s to 7, the model hears local 1
    /// alone over 1.0–1.6 s, and local 1 is named 3 by its speech under 3's turn at 3–4 s in the same window.
    @Test func aReplyFoldedIntoALongerTurnIsGivenBack() {
        let masks: [UInt8] = (0 ..< 40).map { (10 ..< 16).contains($0) || $0 >= 30 ? 2 : 1 }
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 3), Span(speaker: 3, startSeconds: 3, endSeconds: 4)]
        let result = SoloRelabel.relabelled(turns, windows: [OverlapTurnsTests.window(masks)])
        #expect(result.pieces.map(Self.rounded) == [[Span(speaker: 7, startSeconds: 0, endSeconds: 1), Span(speaker: 7, startSeconds: 1.6, endSeconds: 3)],
                                                     [turns[1]]])
        #expect(Self.rounded(result.given) == [Span(speaker: 3, startSeconds: 1.0, endSeconds: 1.6)])
    }

    /// In a window where the turns know only one person, the model's second local speaker has no name to
    /// be told apart by, and nothing moves; the same holds in overlap and silence.
    @Test func nothingMovesWithoutASecondNamedLocalSpeaker() {
        let masks: [UInt8] = (0 ..< 30).map { $0 < 10 ? 1 : ($0 < 15 ? 3 : ($0 < 20 ? 0 : 2)) }
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 3)]
        let result = SoloRelabel.relabelled(turns, windows: [OverlapTurnsTests.window(masks)])
        #expect(result.pieces == [turns])
        #expect(result.given.isEmpty)
    }

    /// A local speaker whose solo frames the turns split evenly between two people is not trusted (the
    /// model may have merged them), so its frames under the other person's turn stay theirs.
    @Test func aLocalSpeakerWithoutAMajorityNameMovesNothing() {
        // local 0 alone in frames 0–9: 5 under 7, 5 under 3; local 1 alone in 10–19 under 3.
        let masks: [UInt8] = (0 ..< 20).map { $0 < 10 ? 1 : 2 }
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 0.5), Span(speaker: 3, startSeconds: 0.5, endSeconds: 2)]
        let covering = OverlapTurns.coveringSpeakers(window: OverlapTurnsTests.window(masks), sortedTurns: turns, longestSeconds: 1.5)
        #expect(SoloRelabel.trustedNames(window: OverlapTurnsTests.window(masks), covering: covering) == [1: 3])
        let result = SoloRelabel.relabelled(turns, windows: [OverlapTurnsTests.window(masks)])
        #expect(result.pieces == turns.map { [$0] })
        #expect(result.given.isEmpty)
    }

    /// A run shorter than SilenceTrim.shortestPieceSeconds (one 17 ms frame of the model here: 0.01 s
    /// frames) is the model's noise, not a word, and stays with the turn.
    @Test func aSliverStaysWithItsTurn() {
        let window = LocalActivityWindow(firstCentreSeconds: 0.005, frameStepSeconds: 0.01,
                                         activeMasks: (0 ..< 200).map { $0 < 100 ? ($0 == 40 || $0 == 41 ? 2 : 1) : 2 })
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 1), Span(speaker: 3, startSeconds: 1, endSeconds: 2)]
        let result = SoloRelabel.relabelled(turns, windows: [window])
        #expect(result.pieces == turns.map { [$0] })
        #expect(result.given.isEmpty)
    }
}
