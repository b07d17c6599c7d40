import Foundation
import Logging
import SpeakerManager
import Testing
@testable import StreamingDiarization

/// Finalize's re-clustering run live (`DiarizerConfig.liveReclusterSeconds`): two voices closer than the
/// online threshold share a label live until the pass separates them, from then on live too.
@Suite struct LiveReclusteringTests {
    static let logger = Logger(label: "live-recluster-test")

    /// Two voices 0.30 apart in `ToneEmbedder`'s space: each is one pitch with 0.4 of the other's
    /// under it. The online threshold (0.5) takes them for one person; smoothed k-means does not.
    func voice(_ which: Int, seconds: Double) -> [Float] {
        zip(tone(which, seconds: seconds), tone(1 - which, seconds: seconds)).map { $0 + 0.4 * $1 }
    }

    /// X, Y, X, Y, 6 s each, no pauses between turns.
    var meeting: [Float] {
        silence(0.5) + voice(0, seconds: 6) + voice(1, seconds: 6) + voice(0, seconds: 6) + voice(1, seconds: 6) + silence(1)
    }

    struct Run {
        /// The first label published over each 0.1 s of the meeting (what live DER scores).
        var firstPublished: [Int: Int32] = [:]
        /// The turns after finalize.
        var final: [UInt64: DiarizerTurn] = [:]
        var passes = 0
        var speakerCount = 0

        func firstSpeaker(at seconds: Double) -> Int32? { firstPublished[Int(seconds * 10)] }

        func finalSpeaker(at seconds: Double) -> Int32? {
            final.values.first { $0.startSeconds <= seconds && seconds < $0.endSeconds }?.speaker
        }
    }

    func run(liveReclusterSeconds: Double, untilSeconds: Double = DiarizerConfig.default.liveReclusterUntilSeconds,
             known: [Speaker] = [], audio: [Float]? = nil, soloSeconds: Double = 1,
             numberFoundingSeconds: Double = ClusterNumbering.foundingSeconds,
             hearing: [(atSeconds: Double, window: LocalActivityWindow)] = []) throws -> Run {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.5
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        if !known.isEmpty { try manager.initializeKnownSpeakers(known, mode: .overwrite, preserveIfPermanent: false) }
        var config = DiarizerConfig.default
        config.liveReclusterSeconds = liveReclusterSeconds
        config.liveReclusterUntilSeconds = untilSeconds
        config.liveSoloSpeakerSeconds = soloSeconds
        config.numberFoundingSeconds = numberFoundingSeconds
        let diarizer = StreamingDiarizer(config: config, detector: LoudnessDetector(), embedder: ToneEmbedder(),
                                         speakers: manager, logger: Self.logger)
        var result = Run()
        func take(_ turns: [DiarizerTurn]) {
            for turn in turns {
                if !turn.isRemoved {
                    for tick in Int((turn.startSeconds * 10).rounded(.up)) ..< Int((turn.endSeconds * 10).rounded(.up)) where result.firstPublished[tick] == nil {
                        result.firstPublished[tick] = turn.speaker
                    }
                }
                if turn.isRemoved { result.final[turn.id] = nil } else { result.final[turn.id] = turn }
            }
        }
        let audio = audio ?? meeting
        // 100 ms chunks, as a device sends them.
        var hearing = hearing
        for start in stride(from: 0, to: audio.count, by: 1600) {
            // A segmentation window reaches the diarizer before the first push past its time, as the plugin's do.
            while let next = hearing.first, next.atSeconds * 16_000 <= Double(start) { diarizer.heard(hearing.removeFirst().window) }
            try diarizer.push(Array(audio[start ..< min(audio.count, start + 1600)]))
            take(diarizer.pullTurns())
        }
        result.passes = diarizer.liveReclusterCount
        try diarizer.finalize()
        take(diarizer.pullTurns())
        result.speakerCount = Set(result.final.values.map(\.speaker)).count
        return result
    }

    @Test func withoutItCloseVoicesShareALabelLiveUntilFinalize() throws {
        let off = try run(liveReclusterSeconds: 0)
        #expect(off.passes == 0)
        #expect(off.firstSpeaker(at: 3.5) == off.firstSpeaker(at: 21.5), "live, the online threshold merges the two voices")
        #expect(off.speakerCount == 2, "finalize separates them")
        #expect(off.finalSpeaker(at: 3.5) != off.finalSpeaker(at: 9.5))
    }

    @Test func afterAPassTheSecondVoiceIsLabelledApartLiveAndFinalLabelsDoNotChange() throws {
        let off = try run(liveReclusterSeconds: 0)
        let on = try run(liveReclusterSeconds: 8)
        #expect(on.passes >= 1)
        // The first pass comes at 8 s of speech, 2 s into Y's first turn (6.5–12.5 s): what is published
        // after it, Y's later seconds and second turn, goes out under Y's own name first.
        let x = try #require(on.firstSpeaker(at: 15.5))
        let y = try #require(on.firstSpeaker(at: 21.5))
        #expect(x != y)
        #expect(on.firstSpeaker(at: 11.0) == y)
        #expect(on.firstSpeaker(at: 3.5) == x, "X keeps the name it had from the start")
        // Final labels: the same partition of the meeting with and without live passes.
        #expect(on.speakerCount == off.speakerCount)
        for seconds in stride(from: 1.0, through: 24.0, by: 0.5) {
            let sameOn = on.finalSpeaker(at: seconds) == on.finalSpeaker(at: 3.5)
            let sameOff = off.finalSpeaker(at: seconds) == off.finalSpeaker(at: 3.5)
            #expect(sameOn == sameOff, "at \(seconds) s")
        }
    }

    /// After a reconnect the session knows the conversation's earlier speakers (not permanent). One who
    /// has not spoken yet when a pass is taken must still be there, and recognised, when they do.
    @Test func aKnownVoiceThatHasNotSpokenYetOutlivesAPass() throws {
        let profile = try ToneEmbedder().embed([tone(2, seconds: 1.5)])[0]
        let earlier = Speaker(id: "1000", name: "Speaker 3", currentEmbedding: profile, durationSeconds: 5, createdAt: Date(), isPermanent: false)
        let result = try run(liveReclusterSeconds: 8, known: [earlier], audio: meeting.dropLast(16_000) + tone(2, seconds: 4) + silence(1))
        #expect(result.passes >= 1)
        #expect(result.firstSpeaker(at: 26.5) == 1000, "labelled live as the earlier session's speaker")
        #expect(result.finalSpeaker(at: 26.5) == 1000)
        #expect(result.firstSpeaker(at: 21.5) != result.firstSpeaker(at: 15.5), "the pass was taken: Y has a name of its own")
    }

    /// A segmentation window over 0–10 s: local speaker 0 alone for its first `first` seconds, local
    /// speaker 1 alone for the next `second` (59 frames a second, segmentation-3.0's step).
    func window(first: Double, second: Double) -> LocalActivityWindow {
        let step = 10.0 / 589
        let masks = (0 ..< 589).map { frame -> UInt8 in
            let seconds = Double(frame) * step
            return seconds < first ? 1 : seconds < first + second ? 2 : 0
        }
        return LocalActivityWindow(firstCentreSeconds: step / 2, frameStepSeconds: step, activeMasks: masks)
    }

    @Test func aWindowThatHearsTwoVoicesAloneCallsAPassThatSeparatesThem() throws {
        // No pass on schedule (100 s of speech never comes): only the window can call one. It hears X
        // (0.5–6.5 s) and Y (6.5–10 s) alone, and reaches the diarizer at 10.5 s.
        let heard = [(atSeconds: 10.5, window: window(first: 6, second: 3.5))]
        let on = try run(liveReclusterSeconds: 100, hearing: heard)
        let off = try run(liveReclusterSeconds: 100, soloSeconds: 0, hearing: heard)
        #expect(off.passes == 0)
        #expect(off.firstSpeaker(at: 15.5) == off.firstSpeaker(at: 21.5), "without the floor the voices share a label live")
        #expect(on.passes == 1)
        let x = try #require(on.firstSpeaker(at: 15.5)), y = try #require(on.firstSpeaker(at: 21.5))
        #expect(x != y, "after the pass, Y's second turn is published under Y's own name")
        #expect(on.firstSpeaker(at: 3.5) == x)
        #expect(on.speakerCount == off.speakerCount, "final labels do not depend on it")
    }

    /// X talks first but briefly, Y longer, before the pass: the number the session showed X under from
    /// the first word stays X's, live after the pass and at the end (matching by shared speech alone
    /// gave it to Y, who had talked more under it, and renamed X).
    @Test func thePersonFirstShownUnderANumberKeepsItThoughALaterVoiceTalkedMoreUnderIt() throws {
        let audio = silence(0.5) + voice(0, seconds: 3) + voice(1, seconds: 9) + voice(0, seconds: 6) + voice(1, seconds: 6) + silence(1)
        // The window hears X (0.5–3.5 s) and Y (3.5–10 s) alone and reaches the diarizer at 12.5 s.
        let heard = [(atSeconds: 12.5, window: window(first: 3, second: 6.5))]
        let kept = try run(liveReclusterSeconds: 100, audio: audio, hearing: heard)
        let bySharedSpeech = try run(liveReclusterSeconds: 100, audio: audio, numberFoundingSeconds: 0, hearing: heard)
        #expect(kept.passes == 1 && bySharedSpeech.passes == 1)
        let x = try #require(kept.firstSpeaker(at: 1.5))
        #expect(kept.firstSpeaker(at: 16.0) == x, "after the pass X is published under its first number")
        #expect(kept.finalSpeaker(at: 1.5) == x && kept.finalSpeaker(at: 16.0) == x)
        #expect(kept.finalSpeaker(at: 8.0) != x, "Y, folded into X live, gets the new number")
        #expect(bySharedSpeech.finalSpeaker(at: 1.5) != bySharedSpeech.firstSpeaker(at: 1.5), "the old matching renamed X")
        // The same partition either way: only the numbers differ.
        #expect(kept.speakerCount == bySharedSpeech.speakerCount)
        for seconds in stride(from: 1.0, through: 24.0, by: 0.5) {
            #expect((kept.finalSpeaker(at: seconds) == x) == (bySharedSpeech.finalSpeaker(at: seconds) == bySharedSpeech.finalSpeaker(at: 1.5)), "at \(seconds) s")
        }
    }

    @Test func aWindowHearingNoMoreVoicesThanTheOnlineSpeakersCallsNoPass() throws {
        // Y alone for 0.5 s: under the 1 s a voice needs, so the window hears one voice, which the
        // online speakers already hold.
        let result = try run(liveReclusterSeconds: 100, hearing: [(atSeconds: 10.5, window: window(first: 6, second: 0.5))])
        #expect(result.passes == 0)
        #expect(result.firstSpeaker(at: 15.5) == result.firstSpeaker(at: 21.5))
    }

    @Test func theSoloCountLeavesOverlapOutAndNeedsTheSecondsGiven() {
        let step = 0.5
        // Speaker 0 alone for 1.5 s, speakers 0 and 1 together for 2 s, speaker 2 alone for 0.5 s.
        let masks: [UInt8] = [1, 1, 1, 3, 3, 3, 3, 4, 0]
        let window = LocalActivityWindow(firstCentreSeconds: 0.25, frameStepSeconds: step, activeMasks: masks)
        #expect(window.soloSpeakerCount(minimumSeconds: 1) == 1)
        #expect(window.soloSpeakerCount(minimumSeconds: 0.5) == 2)
        #expect(window.soloSpeakerCount(minimumSeconds: 2) == 0)
    }

    @Test func noPassRunsPastItsLimit() throws {
        let limited = try run(liveReclusterSeconds: 4, untilSeconds: 6)
        // The first mark (4 s of speech) is under the limit, the next (8 s) past it.
        #expect(limited.passes == 1)
    }
}
