import Foundation
import MeetingSynth
import PluginHost
import Testing
import TestSupport

/// speakerkit's finalize cuts from its turns the silence both its loudness track and the segmentation
/// model hear (SilenceTrim), through the dlopen'd plugin on a synthetic meeting whose every word's
/// time is exact: what is cut is silence, the turns only shrink, and the option turns it off.
@Suite(.serialized) struct SpeakerKitSilenceTrimTests {
    @Test func whatIsCutIsSilenceAndTheTurnsOnlyShrink() throws {
        let script = try MeetingScript.generate(seed: 9103, speakerCount: 2, turnCount: 10)
        let meeting = try MeetingSynthesizer(config: MeetingSetConfig.defaultSynth).synthesize(script, seed: 9103)
        // The live count floor off in both: it follows the overlap worker's timing, which could give
        // the two runs different live passes and so different numbers for the same people. SoloRelabel
        // off too: it moves speech between people, which is not what is compared here.
        let untrimmed = try SpeakerKitOverlapTests.finalTurns(options: #"{"silence_trim": false, "solo_relabel_share": 0, "live_solo_seconds": 0}"#, audio: meeting.audio)
        let trimmed = try SpeakerKitOverlapTests.finalTurns(options: #"{"solo_relabel_share": 0, "live_solo_seconds": 0}"#, audio: meeting.audio)
        // The overlap pass's own turns are left out: only the diarizer's turns are cut.
        let base: UInt64 = 1 << 62
        let before = untrimmed.values.filter { $0.turnID < base }, after = trimmed.values.filter { $0.turnID < base }
        #expect(Set(after.map(\.speaker)) == Set(before.map(\.speaker)))
        for turn in after {
            #expect(before.contains { $0.speaker == turn.speaker && $0.startSeconds <= turn.startSeconds + 1e-6 && turn.endSeconds <= $0.endSeconds + 1e-6 },
                    "\(turn) lies in no untrimmed turn of its speaker")
        }
        // The cut: untrimmed coverage minus trimmed coverage, on a 10 ms grid.
        func covered(_ turns: [ProviderTurn], _ t: Double) -> Bool { turns.contains { $0.startSeconds <= t && t < $0.endSeconds } }
        func inWord(_ t: Double) -> Bool { meeting.words.contains { $0.startSeconds <= t && t < $0.endSeconds } }
        var cut = 0.0, cutInWords = 0.0
        for step in 0 ..< Int(meeting.durationSeconds * 100) {
            let t = Double(step) / 100 + 0.005
            if covered(before, t) && !covered(after, t) {
                cut += 0.01
                if inWord(t) { cutInWords += 0.01 }
            }
        }
        #expect(cut >= 1, "the VAD's padding and pauses leave silence in the turns: \(cut) s cut")
        #expect(cutInWords <= 0.05 * cut, "\(cutInWords) of \(cut) s cut lie in words")
    }
}
