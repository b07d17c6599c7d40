import FLACCodec
import Foundation
import SpeakerSyncAudio
import Testing
import TestSupport

/// FLAC through Debian's libFLAC: bit-exact round trips of real and synthetic audio, real compression
/// on speech, and damaged input refused with an error rather than a crash.
@Suite struct FLACCodecTests {
    /// 16-bit samples as the server keeps them (its /32768 decoding reversed).
    static func samples(_ buffer: AudioBuffer) -> [Int16] { buffer.samples.map(PCMDecoding.quantizeS16) }

    @Test func realSpeechRoundTripsBitExactlyAndCompresses() throws {
        let url = try #require(TestData.file("sample/sample.wav"), "shared/data/sample/sample.wav (set SPEAKERSYNC_TEST_DATA)")
        let audio = try WAVFile.read(contentsOf: url)
        let original = Self.samples(audio)
        let flac = try FLACEncoder.encode(original, sampleRate: audio.sampleRate)
        let decoded = try FLACDecoder.decode(flac)
        #expect(decoded.samples == original)
        #expect(decoded.sampleRate == audio.sampleRate)
        let ratio = Double(flac.count) / Double(original.count * 2)
        print("FLAC on sample.wav: \(original.count * 2) bytes of 16-bit PCM → \(flac.count) bytes, ratio \(String(format: "%.3f", ratio))")
        #expect(ratio < 1)
    }

    @Test(arguments: [
        ("empty", [Int16](), 16_000),
        ("one sample", [Int16(-7)], 16_000),
        ("silence", [Int16](repeating: 0, count: 10_000), 8_000),
        ("full-scale square", (0..<9_000).map { ($0 / 40) % 2 == 0 ? Int16.max : Int16.min }, 48_000),
        ("every value", (0..<65_536).map { Int16(truncatingIfNeeded: $0) }, 44_100),
    ])
    func edgeCasesRoundTrip(name: String, samples: [Int16], sampleRate: Int) throws {
        let decoded = try FLACDecoder.decode(FLACEncoder.encode(samples, sampleRate: sampleRate))
        #expect(decoded.samples == samples, "\(name)")
        #expect(decoded.sampleRate == sampleRate, "\(name)")
    }

    @Test func damagedStreamsAreErrors() throws {
        let samples = (0..<20_000).map { Int16(truncatingIfNeeded: $0 &* 31) }
        let flac = try FLACEncoder.encode(samples, sampleRate: 16_000)
        let inputs: [(String, [UInt8])] = [
            ("nothing", []), ("not FLAC", Array("RIFF....WAVEfmt ".utf8)), ("header only", Array(flac.prefix(42))),
            ("cut in half", Array(flac.prefix(flac.count / 2))),
        ]
        for (name, bytes) in inputs {
            #expect(throws: FLACError.self, "\(name)") { try FLACDecoder.decode(bytes) }
        }
        #expect(throws: FLACError.self) { try FLACEncoder.encode(samples, sampleRate: 0) }
    }
}
