import DiarizationScoring
import Foundation
import PluginHost
import Testing
import TestSupport

/// speakerkit's finalize gives the moments the segmentation hears one person alone, under another
/// person's turn, to the person it hears (SoloRelabel), through the dlopen'd plugin on the shared
/// two-person recording: speech only changes hands (no second of it is added or dropped), what is
/// given lies where the other person's turn was, the labels agree better with the reference, and the
/// option turns it off.
@Suite(.serialized) struct SpeakerKitSoloRelabelTests {
    @Test func speechChangesHandsWhereTheSegmentationHearsTheOtherPerson() throws {
        // Silence trim and the live count floor off in both runs, so that only the relabelling differs
        // (the floor follows the overlap worker's timing, SpeakerKitSilenceTrimTests says why).
        let off = try SpeakerKitOverlapTests.finalTurns(options: #"{"silence_trim": false, "solo_relabel_share": 0, "live_solo_seconds": 0}"#)
        let on = try SpeakerKitOverlapTests.finalTurns(options: #"{"silence_trim": false, "live_solo_seconds": 0}"#)
        // The diarizer's turns and the relabelling's, not the overlap pass's (ids from 1 << 62).
        let overlapBase: UInt64 = 1 << 62, relabelledBase: UInt64 = (1 << 61) + (1 << 60)
        let before = off.values.filter { $0.turnID < overlapBase }, after = on.values.filter { $0.turnID < overlapBase }
        let given = after.filter { $0.turnID >= relabelledBase }
        try #require(!given.isEmpty, "sample.wav has a change of speaker the frames place late")
        #expect(Set(after.map(\.speaker)) == Set(before.map(\.speaker)), "no one is added or lost")
        for turn in given {
            let middle = (turn.startSeconds + turn.endSeconds) / 2
            #expect(before.contains { $0.speaker != turn.speaker && $0.startSeconds <= middle && middle < $0.endSeconds },
                    "\(turn) was another person's speech")
        }
        // Speech only changes hands: on a 10 ms grid, every moment someone had still has someone.
        func covered(_ turns: [ProviderTurn], _ t: Double) -> Bool { turns.contains { $0.startSeconds <= t && t < $0.endSeconds } }
        var changed = 0
        for step in 0 ..< 3_000 {
            let t = Double(step) / 100 + 0.005
            if covered(before, t) != covered(after, t) { changed += 1 }
        }
        // A cut may drop a piece under SilenceTrim.shortestPieceSeconds on either side of what it gave.
        #expect(Double(changed) / 100 <= 2 * 0.05 * Double(given.count), "\(changed) grid points gained or lost speech")
        // And the labels agree better with the reference.
        let rttm = try String(contentsOf: try #require(TestData.file("sample/sample.rttm")), encoding: .utf8)
        let reference = try #require(try RTTM.parse(rttm).values.first)
        func der(_ turns: [ProviderTurn]) -> Double {
            let segments = turns.map { SpeakerSegment(speaker: String($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            return DiarizationErrorRate.score(reference: reference, hypothesis: segments, uem: nil, config: DERConfig(collarSeconds: 0.25)).errorRate
        }
        #expect(der(after) < der(before), "DER \(der(before)) → \(der(after))")
    }
}
