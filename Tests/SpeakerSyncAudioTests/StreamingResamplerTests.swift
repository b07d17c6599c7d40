import Foundation
import Testing
@testable import SpeakerSyncAudio

@Suite struct StreamingResamplerTests {
    static func tone(frequency: Double, rate: Int, seconds: Double, amplitude: Double = 1) -> [Float] {
        (0 ..< Int(seconds * Double(rate))).map { i in
            Float(amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(rate)))
        }
    }

    /// A deterministic pseudo-random generator so chunk sizes vary but runs repeat.
    struct LCG: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test(arguments: [8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 47_999, 48_000])
    func chunkedEqualsOneShot(rate: Int) throws {
        var rng = LCG(state: UInt64(rate))
        let input = (0 ..< rate / 2).map { _ in Float.random(in: -1 ... 1, using: &rng) }
        let oneShot = try StreamingResampler.resample(AudioBuffer(samples: input, sampleRate: rate))

        var resampler = try StreamingResampler(inputRate: rate)
        var chunked: [Float] = []
        var position = 0
        while position < input.count {
            let size = [0, 1, 7, 160, 441, 1_000, 4_093].randomElement(using: &rng)!
            let end = min(input.count, position + size)
            chunked += resampler.process(input[position ..< end])
            position = end
        }
        chunked += resampler.flush()

        #expect(oneShot.sampleRate == 16_000)
        #expect(chunked.count == oneShot.samples.count)
        #expect(chunked.count == resampler.outputCount(forInputCount: input.count))
        #expect(abs(Double(chunked.count) - Double(input.count) * 16_000 / Double(rate)) < 1)
        let maxDiff = zip(chunked, oneShot.samples).map { abs($0 - $1) }.max() ?? 0
        #expect(maxDiff <= 1e-6)
    }

    @Test func sineAt48kKeepsFrequencyAmplitudeAndPhase() throws {
        let input = Self.tone(frequency: 1_000, rate: 48_000, seconds: 2)
        let out = try StreamingResampler.resample(AudioBuffer(samples: input, sampleRate: 48_000)).samples
        #expect(out.count == 32_000)
        // Steady-state region (away from the zero-padded edges): exactly one second.
        let region = 8_000 ..< 24_000
        var crossings = 0
        for j in region.dropFirst() where (out[j - 1] < 0) != (out[j] < 0) { crossings += 1 }
        #expect(abs(crossings - 2_000) <= 2)
        // Project onto sin/cos at 1 kHz over whole periods: amplitude ~1, in phase with the input.
        var sinPart = 0.0, cosPart = 0.0
        for j in region {
            let phase = 2 * Double.pi * 1_000 * Double(j) / 16_000
            sinPart += Double(out[j]) * sin(phase)
            cosPart += Double(out[j]) * cos(phase)
        }
        let scale: Double = 2 / Double(region.count)
        let power: Double = sinPart * sinPart + cosPart * cosPart
        let amplitude: Double = power.squareRoot() * scale
        #expect(abs(amplitude - 1) < 0.01)
        #expect(abs(cosPart) * scale < 0.01, "output is delayed relative to input")
        var maxError = 0.0
        for j in region {
            let ideal: Double = sin(2 * Double.pi * 1_000 * Double(j) / 16_000)
            maxError = max(maxError, abs(Double(out[j]) - ideal))
        }
        #expect(maxError < 2e-3)
    }

    /// 15.5 kHz is 7.5 kHz above the 8 kHz output Nyquist: without the anti-alias filter it would fold
    /// to 500 Hz. It must come out at least 40 dB down; a 3 kHz tone through the same path must not.
    @Test func aboveNyquistToneIsAttenuatedFrom44k() throws {
        func steadyRMS(_ frequency: Double) throws -> Double {
            let input = Self.tone(frequency: frequency, rate: 44_100, seconds: 1)
            let out = try StreamingResampler.resample(AudioBuffer(samples: input, sampleRate: 44_100)).samples
            return TestData.rms(out[2_000 ..< 14_000])
        }
        let reference = 1 / 2.0.squareRoot()
        let aliasDB = 20 * log10(try steadyRMS(15_500) / reference)
        #expect(aliasDB < -40, "15.5 kHz only attenuated \(aliasDB) dB")
        let tenKDB = 20 * log10(try steadyRMS(10_000) / reference)
        #expect(tenKDB < -40, "10 kHz only attenuated \(tenKDB) dB")
        let passDB = 20 * log10(try steadyRMS(3_000) / reference)
        #expect(abs(passDB) < 0.1)
    }

    @Test func upsamplingFrom8kPreservesConstantAndTone() throws {
        let constant = [Float](repeating: 0.25, count: 4_000)
        let out = try StreamingResampler.resample(AudioBuffer(samples: constant, sampleRate: 8_000)).samples
        #expect(out.count == 8_000)
        #expect(out[200 ..< 7_800].allSatisfy { abs($0 - 0.25) < 1e-5 })
    }

    @Test func sixteenKilohertzPassesThroughUnchanged() throws {
        let input = Self.tone(frequency: 440, rate: 16_000, seconds: 0.1)
        var resampler = try StreamingResampler(inputRate: 16_000)
        let out = resampler.process(input) + resampler.flush()
        #expect(out == input)
    }

    @Test func rejectsUnsupportedRates() {
        for rate in [0, 4_000, 96_000] {
            #expect {
                _ = try StreamingResampler(inputRate: rate)
            } throws: { ($0 as? AudioError)?.code == .invalidArgument }
        }
    }

    @Test func resetAfterFlushStartsAFreshStream() throws {
        let input = Self.tone(frequency: 700, rate: 22_050, seconds: 0.3)
        var resampler = try StreamingResampler(inputRate: 22_050)
        let first = resampler.process(input) + resampler.flush()
        let second = resampler.process(input) + resampler.flush()
        #expect(first == second)
    }
}
