import DiarizationScoring
import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import Testing
import TestSupport

/// speakerkit's overlap pass through the dlopen'd plugin on the shared two-person recording: at finalize
/// it adds turns for the second voice where the segmentation model hears two, and changes nothing else.
@Suite(.serialized) struct SpeakerKitOverlapTests {
    /// The turns after finalize (id → turn), the session pushed in 100 ms pieces.
    static func finalTurns(options: String, recording: String = "sample/sample.wav") throws -> [UInt64: ProviderTurn] {
        let file = try #require(TestData.file(recording), "SPEAKERSYNC_TEST_DATA must point at the shared data")
        return try finalTurns(options: options, audio: WAVFile.read(contentsOf: file).samples)
    }

    /// The same for 16 kHz `audio`.
    static func finalTurns(options: String, audio: [Float]) throws -> [UInt64: ProviderTurn] {
        let registry = try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: ProviderConfiguration(sections: [:]),
                                                     logger: Logger(label: "overlap") { _ in SwiftLogNoOpLogHandler() })
        let instance = try registry.makeInstance(providerID: "speakerkit", sessionID: "overlap", optionsJSON: options)
        var turns: [UInt64: ProviderTurn] = [:]
        func take(_ pulled: [ProviderTurn]) { for turn in pulled { turns[turn.turnID] = turn.isRemoved ? nil : turn } }
        for start in stride(from: 0, to: audio.count, by: 1_600) {
            try instance.push(samples: Array(audio[start ..< min(audio.count, start + 1_600)]))
            take(try instance.pullTurns())
        }
        take(try instance.finalize())
        return turns
    }

    @Test func theOverlapPassAddsSecondVoicesAndLeavesTheDiarizersTurnsAlone() throws {
        // When the pass runs (it needs the model's windows), the silence both detectors hear is cut
        // from the turns and SoloRelabel moves speech between people; and the live passes take a count
        // floor from those windows as the worker finishes them (which can renumber the people, and
        // depends on the worker's timing): all three off here, so that what the pass itself does is compared.
        let without = try Self.finalTurns(options: #"{"overlap": false}"#)
        let with = try Self.finalTurns(options: #"{"silence_trim": false, "solo_relabel_share": 0, "live_solo_seconds": 0}"#)
        // Without the pass: one speaker at a time.
        let plain = without.values.sorted { $0.startSeconds < $1.startSeconds }
        #expect(zip(plain, plain.dropFirst()).allSatisfy { $0.endSeconds <= $1.startSeconds + 1e-9 })
        // With it: the same turns, plus added ones of the same people.
        let added = with.values.filter { without[$0.turnID] == nil }
        #expect(with.filter { without[$0.key] != nil }.count == without.count)
        #expect(without.allSatisfy { with[$0.key] == $0.value })
        #expect(!added.isEmpty, "sample.wav has overlapped speech")
        #expect(Set(added.map(\.speaker)).isSubset(of: Set(without.values.map(\.speaker))))
        for turn in added {
            // An added turn never lies on its own speaker's turn.
            #expect(!plain.contains { $0.speaker == turn.speaker && $0.startSeconds < turn.endSeconds - 0.02 && turn.startSeconds + 0.02 < $0.endSeconds },
                    "\(turn)")
        }
        // Most of what it adds is reference speech (the frames are the model's; the names the turns').
        let rttm = try String(contentsOf: try #require(TestData.file("sample/sample.rttm")), encoding: .utf8)
        let reference = try #require(try RTTM.parse(rttm).values.first)
        func speech(_ turn: ProviderTurn) -> Double {
            var covered = 0.0, t = turn.startSeconds
            while t < turn.endSeconds {
                if reference.contains(where: { $0.startSeconds <= t && t < $0.endSeconds }) { covered += 0.01 }
                t += 0.01
            }
            return covered
        }
        let addedSeconds = added.reduce(0) { $0 + $1.endSeconds - $1.startSeconds }
        #expect(added.reduce(0) { $0 + speech($1) } >= 0.7 * addedSeconds, "added \(addedSeconds) s")
    }

    /// In AMI trn09 one person talks for all 30 s and a second (13 s) only over her, so the embeddings
    /// never hear him alone: the overlap pass's orphan voice makes him a speaker of his own, on speech
    /// where the reference has two people. Not when asked for one speaker, nor with the voice turned off.
    @Test func aVoiceHeardOnlyOverAnotherBecomesASpeakerOfItsOwn() throws {
        let recording = "ami-dev/trn09.wav"
        // As above: the trim, the relabelling and the live count floor off, so that the pass alone is compared.
        let without = try Self.finalTurns(options: #"{"overlap": false}"#, recording: recording)
        let with = try Self.finalTurns(options: #"{"silence_trim": false, "solo_relabel_share": 0, "live_solo_seconds": 0}"#, recording: recording)
        let diarizers = Set(without.values.map(\.speaker))
        let new = with.values.filter { !diarizers.contains($0.speaker) }
        try #require(Set(new.map(\.speaker)).count == 1, "one new speaker")
        #expect(without.allSatisfy { with[$0.key] == $0.value }, "the diarizer's turns are unchanged")
        let rttm = try String(contentsOf: try #require(TestData.file("ami-dev/reference.rttm")), encoding: .utf8)
        let reference = try #require(try RTTM.parse(rttm)["trn09"])
        var overlapped = 0.0, total = 0.0
        for turn in new {
            var t = turn.startSeconds
            while t < turn.endSeconds {
                if reference.filter({ $0.startSeconds <= t && t < $0.endSeconds }).count >= 2 { overlapped += 0.01 }
                total += 0.01
                t += 0.01
            }
        }
        #expect(total >= 4, "at least the orphan voice's minimum speech")
        #expect(overlapped >= 0.7 * total, "\(overlapped) of \(total) s over another's speech")
        for options in [#"{"orphan_voice_seconds": 0, "live_solo_seconds": 0}"#, #"{"num_speakers": 1, "live_solo_seconds": 0}"#] {
            let turns = try Self.finalTurns(options: options, recording: recording)
            let plain = try Self.finalTurns(options: options.replacingOccurrences(of: "{", with: #"{"overlap": false, "#), recording: recording)
            #expect(Set(turns.values.map(\.speaker)) == Set(plain.values.map(\.speaker)), "\(options)")
        }
    }
}
