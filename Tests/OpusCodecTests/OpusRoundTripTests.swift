import Foundation
import OpusCodec
import SpeakerSyncAudio
import Testing
import TestSupport

/// libopus through the owning types: what the encoder makes, the decoder turns back into the speech.
@Suite struct OpusRoundTripTests {
    /// Pearson correlation of `a` and `b` (same length).
    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let n = Double(a.count)
        let meanA = a.reduce(0.0) { $0 + Double($1) } / n
        let meanB = b.reduce(0.0) { $0 + Double($1) } / n
        var ab = 0.0, aa = 0.0, bb = 0.0
        for (x, y) in zip(a, b) {
            let dx = Double(x) - meanA, dy = Double(y) - meanB
            ab += dx * dy; aa += dx * dx; bb += dy * dy
        }
        return ab / (aa * bb).squareRoot()
    }

    /// Signal-to-noise ratio in dB of `decoded` against `reference`.
    static func snr(_ reference: ArraySlice<Float>, _ decoded: ArraySlice<Float>) -> Double {
        var signal = 0.0, noise = 0.0
        for (x, y) in zip(reference, decoded) {
            signal += Double(x) * Double(x)
            noise += Double(x - y) * Double(x - y)
        }
        return 10 * log10(signal / noise)
    }

    @Test func realSpeechSurvivesEncodingAndDecoding() throws {
        guard let wav = TestData.file("sample/sample.wav") else {
            Issue.record("shared/data/sample is missing; set SPEAKERSYNC_TEST_DATA")
            return
        }
        let recording = try WAVFile.read(contentsOf: wav)
        try #require(recording.sampleRate == 16_000)
        let encoder = try OpusEncoder(sampleRate: 16_000, bitsPerSecond: 24_000)
        let decoder = try OpusDecoder(sampleRate: 16_000)
        let packets = try encoder.encode(recording.samples)
        #expect(packets.count == (recording.samples.count + encoder.frameSize - 1) / encoder.frameSize)
        var decoded: [Float] = []
        for packet in packets {
            let samples = try decoder.decode(packet)
            #expect(samples.count == encoder.frameSize)
            #expect(try OpusDecoder.sampleCount(of: packet, sampleRate: 16_000) == encoder.frameSize)
            decoded += samples
        }
        // The decoded stream lags the input by the encoder's lookahead; compare them aligned.
        let delay = encoder.lookahead
        let length = recording.samples.count - delay
        let reference = recording.samples[0..<length]
        let aligned = decoded[delay..<delay + length]
        let correlation = Self.correlation(reference, aligned)
        let snr = Self.snr(reference, aligned)
        // Measured 0.97 / 12.4 dB at 24 kbps (a perceptual codec: waveform SNR is modest); the bounds
        // sit below that, and far above a misaligned or broken decode (correlation near 0).
        #expect(correlation > 0.9, "correlation \(correlation)")
        #expect(snr > 8, "SNR \(snr) dB")
        print("opus round trip: correlation \(correlation), SNR \(snr) dB, lookahead \(delay)")
    }

    @Test func aCorruptPacketThrowsAndTheDecoderGoesOn() throws {
        let encoder = try OpusEncoder(sampleRate: 48_000)
        let decoder = try OpusDecoder(sampleRate: 48_000)
        let tone = (0..<encoder.frameSize).map { Float(sin(Double($0) * 0.05) * 0.3) }
        let packet = try encoder.encode(frame: tone[...])
        // Code 1 (two equal frames) with an odd payload length breaks RFC 6716 rule R3.
        #expect(throws: OpusError.self) { try decoder.decode([0x01, 1, 2, 3]) }
        // Code 3 with zero frames breaks R5.
        #expect(throws: OpusError.self) { try decoder.decode([0x03, 0x00]) }
        #expect(throws: OpusError.self) { try decoder.decode([]) }
        #expect(try decoder.decode(packet).count == 960)
    }

    @Test func unsupportedRatesAreRefused() {
        #expect(throws: OpusError.self) { try OpusDecoder(sampleRate: 44_100) }
        #expect(throws: OpusError.self) { try OpusEncoder(sampleRate: 22_050) }
        #expect(OpusDecoder.sampleRates == [8_000, 12_000, 16_000, 24_000, 48_000])
    }
}
