import DiarizationScoring
import Testing

/// Whether people keep the number they were introduced under live (what DER's fresh mapping cannot see).
@Suite struct SpeakerNumberKeepingTests {
    // A talks 0–10 s, B 10–20 s, A again 20–25 s.
    let reference = [
        SpeakerSegment(speaker: "A", startSeconds: 0, endSeconds: 10),
        SpeakerSegment(speaker: "B", startSeconds: 10, endSeconds: 20),
        SpeakerSegment(speaker: "A", startSeconds: 20, endSeconds: 25),
    ]
    /// Live folded B into A's number until the end.
    let foldedLive = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 25)]

    @Test func aPersonRenamedAtFinalizeIsNotKeptThoughTheFinalTurnsAreRight() {
        let renamed = [SpeakerSegment(speaker: "2", startSeconds: 0, endSeconds: 10),
                       SpeakerSegment(speaker: "1", startSeconds: 10, endSeconds: 20),
                       SpeakerSegment(speaker: "2", startSeconds: 20, endSeconds: 25)]
        let score = SpeakerNumberKeeping(reference: reference, liveTurns: foldedLive, finalTurns: renamed)
        // B was introduced under A's number, so only A counts, and A lost it.
        #expect(score == SpeakerNumberKeeping(introducedCount: 1, keptCount: 0))
    }

    @Test func thePersonFirstShownUnderANumberKeepsItWhenTheFoldedVoiceGetsTheNewOne() {
        let kept = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 10),
                    SpeakerSegment(speaker: "2", startSeconds: 10, endSeconds: 20),
                    SpeakerSegment(speaker: "1", startSeconds: 20, endSeconds: 25)]
        #expect(SpeakerNumberKeeping(reference: reference, liveTurns: foldedLive, finalTurns: kept)
            == SpeakerNumberKeeping(introducedCount: 1, keptCount: 1))
        // Live right from the start: both introduced under their own numbers, both kept.
        #expect(SpeakerNumberKeeping(reference: reference, liveTurns: kept, finalTurns: kept)
            == SpeakerNumberKeeping(introducedCount: 2, keptCount: 2))
    }

    @Test func theIntroductionIsTheFirstSpeechAloneAndTheUEMBoundsIt() {
        // B starts over A (8–10 s overlapped); B's speech alone starts at 10 s, where live calls them "2".
        let overlapping = [SpeakerSegment(speaker: "A", startSeconds: 0, endSeconds: 10),
                           SpeakerSegment(speaker: "B", startSeconds: 8, endSeconds: 20)]
        let live = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 10.5),
                    SpeakerSegment(speaker: "2", startSeconds: 10.5, endSeconds: 20)]
        let final = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 10),
                     SpeakerSegment(speaker: "2", startSeconds: 10, endSeconds: 20)]
        #expect(SpeakerNumberKeeping(reference: overlapping, liveTurns: live, finalTurns: final).keptCount == 2)
        // Outside the scored region a person is not counted at all.
        let uem = [TimeSpan(startSeconds: 0, endSeconds: 9)]
        #expect(SpeakerNumberKeeping(reference: overlapping, liveTurns: live, finalTurns: final, uem: uem)
            == SpeakerNumberKeeping(introducedCount: 1, keptCount: 1))
    }

    @Test func aPersonLiveNeverLabelledIsNotIntroducedAndSumsAddUp() {
        let silentLive = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 10)]
        let final = [SpeakerSegment(speaker: "1", startSeconds: 0, endSeconds: 10),
                     SpeakerSegment(speaker: "2", startSeconds: 10, endSeconds: 20)]
        let score = SpeakerNumberKeeping(reference: reference, liveTurns: silentLive, finalTurns: final)
        #expect(score == SpeakerNumberKeeping(introducedCount: 1, keptCount: 1))
        #expect(score + score == SpeakerNumberKeeping(introducedCount: 2, keptCount: 2))
        #expect(score + .zero == score)
    }
}
