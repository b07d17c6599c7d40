import Foundation
import Testing
@testable import SpeakerEmbedding

/// The hand-written FFT against the DFT's definition, evaluated in Double.
@Suite struct FrontEndTests {
    func directDFT(_ real: [Float], _ imaginary: [Float]) -> (real: [Double], imaginary: [Double]) {
        let n = real.count
        var outReal = [Double](repeating: 0, count: n), outImaginary = outReal
        for k in 0 ..< n {
            for t in 0 ..< n {
                let angle = -2 * Double.pi * Double((k * t) % n) / Double(n)
                outReal[k] += Double(real[t]) * cos(angle) - Double(imaginary[t]) * sin(angle)
                outImaginary[k] += Double(real[t]) * sin(angle) + Double(imaginary[t]) * cos(angle)
            }
        }
        return (outReal, outImaginary)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 8, 12, 20, 21, 49, 77, 100, 200, 400])
    func complexFFTMatchesTheDefinition(size: Int) throws {
        let samples = try EncoderFixture.recording("sample/sample.wav")
        var real = Array(samples[160_000 ..< 160_000 + size]), imaginary = Array(samples[200_000 ..< 200_000 + size])
        let expected = directDFT(real, imaginary)
        var scratchReal = [Float](repeating: 0, count: size), scratchImaginary = scratchReal
        MixedRadixFFT(size: size).forward(
            real: &real, imaginary: &imaginary, scratchReal: &scratchReal, scratchImaginary: &scratchImaginary)
        let scale = max(1e-3, expected.real.map(abs).max()!)
        for k in 0 ..< size {
            #expect(abs(Double(real[k]) - expected.real[k]) <= 1e-5 * scale * Double(size).squareRoot(), "size \(size) bin \(k) real")
            #expect(abs(Double(imaginary[k]) - expected.imaginary[k]) <= 1e-5 * scale * Double(size).squareRoot(), "size \(size) bin \(k) imaginary")
        }
    }

    @Test func realPowerSpectrumOf400PointsMatchesTheDefinition() throws {
        let samples = try EncoderFixture.recording("ami-dev/trn03.wav")
        let frame = Array(samples[48_000 ..< 48_400])
        let expected = directDFT(frame, [Float](repeating: 0, count: 400))
        let spectrum = RealPowerSpectrum(frameLength: 400)
        var power = [Float](repeating: 0, count: spectrum.binCount)
        var scratch = [Float](repeating: 0, count: spectrum.scratchCount)
        spectrum.power(of: frame, into: &power, scratch: &scratch)
        let peak = (0 ... 200).map { expected.real[$0] * expected.real[$0] + expected.imaginary[$0] * expected.imaginary[$0] }.max()!
        for k in 0 ... 200 {
            let truth = expected.real[k] * expected.real[k] + expected.imaginary[k] * expected.imaginary[k]
            #expect(abs(Double(power[k]) - truth) <= 1e-5 * peak, "bin \(k): \(power[k]) vs \(truth)")
        }
    }

    @Test func reflectPaddingMirrorsWithoutRepeatingTheEdge() {
        // numpy.pad([a b c d], 3, "reflect") = [d c b | a b c d | c b a]
        #expect((-3 ..< 7).map { MelFrontEnd.reflected($0, count: 4) } == [3, 2, 1, 0, 1, 2, 3, 2, 1, 0])
    }
}
