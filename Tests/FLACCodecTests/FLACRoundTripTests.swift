import Foundation
import FLACCodec
import SpeakerSyncAudio
import Testing
import TestSupport

/// libFLAC through the owning types: lossless means every sample comes back exactly, on real speech
/// and on the inputs most likely to break a wrapper (nothing, one sample, the extremes of Int16).
@Suite struct FLACRoundTripTests {
    @Test func realSpeechComesBackBitExactAndSmaller() throws {
        guard let wav = TestData.file("sample/sample.wav") else {
            Issue.record("shared/data/sample is missing; set SPEAKERSYNC_TEST_DATA")
            return
        }
        let recording = try WAVFile.read(contentsOf: wav)
        let samples = FLACTestSignals.pcm16(recording.samples)
        let stream = try FLACEncoder.encode(samples, sampleRate: recording.sampleRate)
        #expect(Array(stream.prefix(4)) == Array("fLaC".utf8))
        #expect(FLACTestSignals.totalSampleCount(stream) == samples.count)

        let decoded = try FLACDecoder.decode(stream)
        #expect(decoded.sampleRate == recording.sampleRate)
        #expect(decoded.samples.count == samples.count)
        #expect(decoded.samples == samples)

        // Against the 16-bit PCM the server would otherwise store.
        let ratio = Double(stream.count) / Double(samples.count * MemoryLayout<Int16>.size)
        print("flac sample.wav: \(samples.count) samples at \(recording.sampleRate) Hz, "
            + "\(samples.count * 2) PCM bytes -> \(stream.count) FLAC bytes, ratio \(String(format: "%.3f", ratio))")
        #expect(ratio < 1, "ratio \(ratio)")
    }

    /// One synthetic input and its rate.
    struct Signal: Sendable, CustomTestStringConvertible {
        var name: String
        var samples: [Int16]
        var sampleRate: Int
        var testDescription: String { "\(name) (\(samples.count) samples at \(sampleRate) Hz)" }
    }

    static let signals: [Signal] = [
        Signal(name: "empty", samples: [], sampleRate: 16_000),
        Signal(name: "one sample", samples: [12_345], sampleRate: 16_000),
        Signal(name: "one minimum sample", samples: [Int16.min], sampleRate: 16_000),
        // Several whole 4096-sample blocks and a partial one.
        Signal(name: "full-scale square", samples: FLACTestSignals.fullScaleSquare(count: 20_000, halfPeriod: 20), sampleRate: 16_000),
        Signal(name: "full-scale alternating", samples: FLACTestSignals.fullScaleSquare(count: 4_097, halfPeriod: 1), sampleRate: 16_000),
        Signal(name: "silence", samples: [Int16](repeating: 0, count: 160_000), sampleRate: 16_000),
        Signal(name: "noise", samples: FLACTestSignals.noise(count: 10_000, seed: 7), sampleRate: 16_000),
        Signal(name: "tone at 8 kHz", samples: FLACTestSignals.tone(hertz: 440, seconds: 1.3, sampleRate: 8_000), sampleRate: 8_000),
        Signal(name: "tone at 48 kHz", samples: FLACTestSignals.tone(hertz: 440, seconds: 1.3, sampleRate: 48_000), sampleRate: 48_000),
    ]

    @Test(arguments: signals) func comesBackExactly(_ signal: Signal) throws {
        let stream = try FLACEncoder.encode(signal.samples, sampleRate: signal.sampleRate)
        let decoded = try FLACDecoder.decode(stream)
        #expect(decoded.sampleRate == signal.sampleRate)
        #expect(decoded.samples == signal.samples)
    }

    @Test func silenceAlmostVanishes() throws {
        let silence = [Int16](repeating: 0, count: 160_000)
        let stream = try FLACEncoder.encode(silence, sampleRate: 16_000)
        // Each 4096-sample frame of silence is a constant subframe: a few bytes.
        #expect(stream.count < silence.count * 2 / 100, "\(stream.count) bytes")
    }

    @Test func ratesFLACCannotCarryAreRefused() {
        for sampleRate in [0, -16_000, 2_000_000] {
            #expect { try FLACEncoder(sampleRate: sampleRate) } throws: { error in
                (error as? FLACError)?.code == .invalidConfiguration
            }
            #expect(throws: FLACError.self) { try FLACEncoder.encode([1, 2, 3], sampleRate: sampleRate) }
        }
    }
}
