import Foundation
import Testing
@testable import StreamingDiarization

@Suite struct SilenceTrimTests {
    typealias Span = OverlapTurns.Span
    typealias Stretch = SilenceTrim.Stretch

    /// Frames of 0.1 s from `start`, one mask each (0: no local speaker).
    func window(_ start: Double, _ masks: [UInt8]) -> LocalActivityWindow {
        LocalActivityWindow(firstCentreSeconds: start + 0.05, frameStepSeconds: 0.1, activeMasks: masks)
    }

    @Test func silencesJoinSilentFramesAcrossWindows() {
        let windows = [window(1, [1, 1, 0, 0]), window(0, [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]), window(1.4, [0, 3, 0])]
        let silences = SilenceTrim.silences(in: windows)
        #expect(silences.count == 3)
        #expect(abs(silences[0].startSeconds - 0) < 1e-9 && abs(silences[0].endSeconds - 0.2) < 1e-9)
        // 1.2–1.4 and 1.4–1.5 touch across two windows: one silence.
        #expect(abs(silences[1].startSeconds - 1.2) < 1e-9 && abs(silences[1].endSeconds - 1.5) < 1e-9)
        #expect(abs(silences[2].startSeconds - 1.6) < 1e-9 && abs(silences[2].endSeconds - 1.7) < 1e-9)
    }

    @Test func onlyWhatBothHearIsKeptAndOnlyWhenLongEnough() {
        let loud = [Stretch(startSeconds: 1, endSeconds: 2), Stretch(startSeconds: 3, endSeconds: 4)]
        let model = [Stretch(startSeconds: 1.5, endSeconds: 3.1), Stretch(startSeconds: 3.5, endSeconds: 3.6)]
        let agreed = SilenceTrim.agreed(loud, model, minimumSeconds: 0.25)
        // 1.5–2 is long enough; 3–3.1 and 3.5–3.6 are not.
        #expect(agreed == [Stretch(startSeconds: 1.5, endSeconds: 2)])
    }

    @Test func turnsLoseTheirEndsAndAreSplitAroundSilence() {
        let silences = [Stretch(startSeconds: 0.8, endSeconds: 1.2), Stretch(startSeconds: 2, endSeconds: 2.5),
                        Stretch(startSeconds: 3.9, endSeconds: 4.6), Stretch(startSeconds: 6, endSeconds: 7)]
        // Starts in one silence, holds another, ends in a third.
        let pieces = SilenceTrim.pieces(of: Span(speaker: 1, startSeconds: 1, endSeconds: 4), silences: silences)
        #expect(pieces == [Span(speaker: 1, startSeconds: 1.2, endSeconds: 2), Span(speaker: 1, startSeconds: 2.5, endSeconds: 3.9)])
        // Untouched, entirely silent, and a sliver left between two silences.
        let untouched = Span(speaker: 2, startSeconds: 5, endSeconds: 5.9)
        #expect(SilenceTrim.pieces(of: untouched, silences: silences) == [untouched])
        #expect(SilenceTrim.pieces(of: Span(speaker: 2, startSeconds: 6.2, endSeconds: 6.8), silences: silences).isEmpty)
        let sliver = [Stretch(startSeconds: 1, endSeconds: 2), Stretch(startSeconds: 2.03, endSeconds: 3)]
        #expect(SilenceTrim.pieces(of: Span(speaker: 3, startSeconds: 0.5, endSeconds: 3.5), silences: sliver)
                == [Span(speaker: 3, startSeconds: 0.5, endSeconds: 1), Span(speaker: 3, startSeconds: 3, endSeconds: 3.5)])
        #expect(SilenceTrim.pieces(of: untouched, silences: []) == [untouched])
    }

    @Test func containsFindsTheStretchHoldingATime() {
        let stretches = [SilenceTrim.Stretch(startSeconds: 1, endSeconds: 2), SilenceTrim.Stretch(startSeconds: 4, endSeconds: 5)]
        #expect(!SilenceTrim.contains([], 1.5))
        #expect([0.5, 1, 1.5, 2, 3, 4.5, 5, 6].map { SilenceTrim.contains(stretches, $0) }
            == [false, true, true, false, false, true, false, false])
    }

    @Test func theDiarizerAgreesOnlyWhereItsLoudnessTrackHearsAPauseToo() throws {
        // Tone 0.5–2.5 s, 0.6 s of digital silence, tone 3.1–5.1 s.
        let audio = silence(0.5) + tone(0, seconds: 2) + silence(0.6) + tone(0, seconds: 2) + silence(0.5)
        // The model hears no one from 2.4 to 3.0 (inside the pause, and into the tone before it) and
        // from 4.0 to 4.5 (the tone plays there: no pause, so no agreement).
        let masks = (0 ..< 56).map { frame -> UInt8 in
            let t = Double(frame) / 10
            return (2.4 ..< 3.0).contains(t) || (4.0 ..< 4.5).contains(t) || t < 0.5 || t >= 5.1 ? 0 : 1
        }
        let windows = [window(0, masks)]
        func agreed(_ config: DiarizerConfig) throws -> [Stretch] {
            let diarizer = try StreamingDiarizerTests().makeDiarizer(config: config)
            for chunk in stride(from: 0, to: audio.count, by: 1600) { try diarizer.push(Array(audio[chunk ..< min(audio.count, chunk + 1600)])) }
            return diarizer.agreedSilences(windows: windows)
        }
        let found = try agreed(.default)
        let pause = try #require(found.first { $0.startSeconds < 3 && $0.endSeconds > 2.5 })
        #expect(abs(pause.startSeconds - 2.5) < 0.02 && abs(pause.endSeconds - 3.0) < 0.02, "\(pause)")
        #expect(!found.contains { $0.startSeconds < 4.5 && $0.endSeconds > 4.0 })
        var off = DiarizerConfig.default
        off.silenceTrim = false
        #expect(try agreed(off).isEmpty)
    }
}
