import Foundation
import Testing
@testable import MeetingSynth

/// Timbre drift: each voice resampled by a factor that ramps across the meeting.
@Suite struct TimbreDriftTests {
    @Test func theFactorRampsAroundOneInTheSpeakersDirection() {
        let drift = TimbreDrift(spanRatio: 0.1)
        #expect(abs(drift.factor(upward: true, progress: 0) - 0.95) < 1e-12)
        #expect(abs(drift.factor(upward: true, progress: 1) - 1.05) < 1e-12)
        #expect(abs(drift.factor(upward: false, progress: 0) - 1.05) < 1e-12)
        #expect(abs(drift.factor(upward: false, progress: 1) - 0.95) < 1e-12)
        #expect(drift.factor(upward: true, progress: 0.5) == 1)
        // Progress outside 0…1 is clamped, so the factor never leaves its span.
        #expect(drift.factor(upward: true, progress: 3) == drift.factor(upward: true, progress: 1))
    }

    @Test func resamplingAboveOneShortensAndBelowOneLengthens() throws {
        let rate = MeetingSynthesizer.sampleRate
        let ramp = (0 ..< 1000).map { Float($0) }
        let faster = try TimbreDrift.resample(ramp, factor: 1.05, sampleRate: rate)
        let slower = try TimbreDrift.resample(ramp, factor: 0.95, sampleRate: rate)
        // Read at 16800 and 15200 Hz: ⌈1000 × 16000 / rate⌉ samples come back.
        #expect(faster.count == 953)
        #expect(slower.count == 1053)
        // Away from the edges (the filter's zero padding) a linear signal stays linear: sample j is
        // the input read at j × factor.
        #expect(abs(faster[100] - 105) < 1e-2)
        #expect(abs(slower[100] - 95) < 1e-2)
        #expect(try TimbreDrift.resample(ramp, factor: 1, sampleRate: rate) == ramp)
    }

    @Test func aToneReadPastNyquistIsFilteredNotFoldedBack() throws {
        // 7.8 kHz read 1.05 times as fast is 8.19 kHz, above the 8 kHz Nyquist: a band-limited
        // resampler removes it, where linear interpolation would mirror it to 7.81 kHz.
        let rate = MeetingSynthesizer.sampleRate
        let tone = (0 ..< rate).map { Float(sin(2 * Double.pi * 7800 * Double($0) / Double(rate))) }
        let read = try TimbreDrift.resample(tone, factor: 1.05, sampleRate: rate)
        func power(_ x: ArraySlice<Float>) -> Float { x.reduce(0) { $0 + $1 * $1 } / Float(x.count) }
        let middle = read[read.count / 4 ..< read.count * 3 / 4]
        #expect(power(tone[...]) > 0.4)
        #expect(power(middle) < 0.01 * power(tone[...]))
    }

    @Test func aResamplerKeptForARateGivesEachWordWhatAFreshOneGives() throws {
        // The synthesizer keeps one resampler per rate (its filter designed once); each word must still
        // come out as a stream of its own, with no tail of the word before it.
        let rate = MeetingSynthesizer.sampleRate
        let first = (0 ..< 700).map { Float(sin(Double($0) * 0.05)) }
        let second = (0 ..< 400).map { Float(($0 % 37) - 18) / 18 }
        var kept = try #require(try TimbreDrift.resampler(factor: 1.0273, sampleRate: rate))
        let firstKept = TimbreDrift.resample(first, with: &kept)
        let secondKept = TimbreDrift.resample(second, with: &kept)
        #expect(firstKept == (try TimbreDrift.resample(first, factor: 1.0273, sampleRate: rate)))
        #expect(secondKept == (try TimbreDrift.resample(second, factor: 1.0273, sampleRate: rate)))
        #expect(secondKept.count < second.count)
        // Where the audio stays as it is, there is no resampler to keep.
        #expect(try TimbreDrift.resampler(factor: 1, sampleRate: rate) == nil)
        #expect(try TimbreDrift.resampler(factor: .nan, sampleRate: rate) == nil)
        #expect(try TimbreDrift.resampler(factor: -2, sampleRate: rate) == nil)
    }

    @Test func directionsComeFromTheirOwnStreamAndDependOnTheSeed() {
        let speakers = ["spk1", "spk2", "spk3", "spk4"]
        #expect(TimbreDrift.directions(of: speakers, seed: 9) == TimbreDrift.directions(of: speakers, seed: 9))
        #expect(Set(TimbreDrift.directions(of: speakers, seed: 9).keys) == Set(speakers))
        let manySeeds = (0 ..< 32).map { TimbreDrift.directions(of: speakers, seed: UInt64($0)) }
        #expect(Set(manySeeds.map { directions in speakers.map { directions[$0]! ? "u" : "d" }.joined() }).count > 1)
    }

    @Test func driftMovesEachWordsDurationAndLeavesTheScriptAlone() throws {
        let script = try MeetingScript.generate(seed: 21, speakerCount: 2, turnCount: 8)
        let plain = try MeetingSynthesizer().synthesize(script, seed: 21)
        let none = try MeetingSynthesizer(config: SynthConfig(timbreDrift: TimbreDrift(spanRatio: 0))).synthesize(script, seed: 21)
        #expect(none.audio == plain.audio && none.words == plain.words)

        let drift = TimbreDrift(spanRatio: 0.2)
        let drifted = try MeetingSynthesizer(config: SynthConfig(timbreDrift: drift)).synthesize(script, seed: 21)
        #expect(drifted.words.map(\.text) == plain.words.map(\.text))
        #expect(drifted.words.map(\.speaker) == plain.words.map(\.speaker))
        // Each word lasts its plain duration divided by its turn's factor (to a sample of rounding).
        let directionOf = TimbreDrift.directions(of: script.speakers.map(\.id), seed: 21)
        var wordIndex = 0
        for (turnIndex, turn) in script.turns.enumerated() {
            let factor = drift.factor(upward: directionOf[turn.speaker]!, progress: Double(turnIndex) / Double(script.turns.count - 1))
            for _ in turn.words {
                let before = plain.words[wordIndex].endSeconds - plain.words[wordIndex].startSeconds
                let after = drifted.words[wordIndex].endSeconds - drifted.words[wordIndex].startSeconds
                #expect(abs(after - before / factor) < 2.0 / Double(MeetingSynthesizer.sampleRate) + 1e-9)
                wordIndex += 1
            }
        }
        #expect(drifted.audio != plain.audio)
    }
}
