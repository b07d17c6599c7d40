import Foundation
import SpeakerSyncAudio
import Testing

@testable import FLACCodec

/// What the decoder does with input it should not trust: never a crash, never audio with a hole in
/// it, always a `FLACError` whose code says why.
@Suite struct FLACDamageTests {
    /// 0.6 s of tone: a few frames, so damage can land in a header, a body or between frames.
    static let samples = FLACTestSignals.tone(hertz: 300, seconds: 0.6, sampleRate: 8_000)

    /// Decoding `bytes` throws a `FLACError` with `code`; `input` names the input in failures.
    static func expectCode(_ code: FLACError.Code, decoding bytes: [UInt8], _ input: String = "",
                           sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let decoded = try FLACDecoder.decode(bytes)
            Issue.record("\(input): decoded \(decoded.samples.count) samples; expected \(code)", sourceLocation: sourceLocation)
        } catch let error as FLACError {
            #expect(error.code == code, "\(input): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("not a FLACError: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func garbageIsNotAStream() throws {
        for count in [0, 1, 3, 4, 41, 42, 1_000, 100_000] {
            Self.expectCode(.corruptStream, decoding: FLACTestSignals.bytes(count: count, seed: UInt64(count)), "\(count) random bytes")
        }
        // The magic number, then noise.
        Self.expectCode(.corruptStream, decoding: Array("fLaC".utf8) + FLACTestSignals.bytes(count: 5_000, seed: 11))
        // A WAV file is not FLAC.
        let wav = WAVWriter.encode(AudioBuffer(samples: [0.1, -0.2, 0.3], sampleRate: 16_000))
        Self.expectCode(.corruptStream, decoding: Array(wav))
    }

    @Test func garbageAfterAValidHeaderIsCaught() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 8_000)
        let audio = FLACTestSignals.audioOffset(stream)
        for seed in UInt64(0)..<20 {
            let noise = FLACTestSignals.bytes(count: stream.count - audio, seed: 100 + seed)
            Self.expectCode(.corruptStream, decoding: Array(stream[..<audio]) + noise, "noise seed \(seed)")
        }
    }

    @Test func everyTruncationIsCaught() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 8_000)
        for length in 0..<stream.count {
            Self.expectCode(.corruptStream, decoding: Array(stream[..<length]), "first \(length) of \(stream.count) bytes")
        }
        #expect(try FLACDecoder.decode(stream).samples == Self.samples)
    }

    @Test func aFlippedByteInTheAudioIsCaught() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 8_000)
        // Every frame header and body is under a CRC (8 and 16 bits), which any one-byte change breaks.
        for offset in FLACTestSignals.audioOffset(stream)..<stream.count {
            var damaged = stream
            damaged[offset] ^= 0x10
            Self.expectCode(.corruptStream, decoding: damaged, "byte \(offset) of \(stream.count) flipped")
        }
    }

    @Test func aStreamLongerThanItsHeaderSaysIsCaught() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 8_000)
        // Declaring fewer samples than the frames hold stops the decode at the first frame too many
        // (the bound that keeps a hostile stream from growing the output without limit); more
        // samples than they hold reads as a stream cut short.
        Self.expectCode(.corruptStream, decoding: FLACTestSignals.settingTotalSampleCount(100, in: stream))
        Self.expectCode(.corruptStream, decoding: FLACTestSignals.settingTotalSampleCount(Self.samples.count + 1, in: stream))
        // Unknown (0) is allowed by the format: the frames are all there is.
        #expect(try FLACDecoder.decode(FLACTestSignals.settingTotalSampleCount(0, in: stream)).samples == Self.samples)
    }

    @Test func audioNotMatchingItsMD5IsCaught() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 8_000)
        let md5 = FLACTestSignals.md5Range
        // The encoder's final STREAMINFO carries the MD5; the decoder checks the audio against it.
        #expect(stream[md5].contains { $0 != 0 })
        var damaged = stream
        damaged[md5.lowerBound] ^= 0x01
        Self.expectCode(.corruptStream, decoding: damaged, "MD5 altered")
    }

    /// A real libFLAC stream of another layout, made with the module's own raw calls.
    static func stream(channelCount: Int, bitsPerSample: Int, frames: Int) throws -> [UInt8] {
        let encoder = try LibFLAC.encoderNew()
        defer { LibFLAC.encoderDelete(encoder) }
        let output = FLACOutputBuffer()
        try LibFLAC.configure(encoder, channelCount: channelCount, bitsPerSample: bitsPerSample, sampleRate: 16_000,
                              compressionLevel: 5, totalSampleCount: frames)
        try LibFLAC.initStream(encoder, output: output)
        let limit = Int32(1) << (bitsPerSample - 2)
        let interleaved = (0..<frames * channelCount).map { Int32($0 % 200) * limit / 200 }
        try interleaved.withUnsafeBufferPointer { (buffer) throws(FLACError) in
            try LibFLAC.process(encoder, interleaved: buffer, channelCount: channelCount)
        }
        try LibFLAC.finish(encoder)
        return output.take()
    }

    @Test(arguments: [(2, 16), (1, 24), (1, 8), (2, 24)])
    func otherLayoutsAreRefusedByName(channelCount: Int, bitsPerSample: Int) throws {
        let stream = try Self.stream(channelCount: channelCount, bitsPerSample: bitsPerSample, frames: 5_000)
        Self.expectCode(.unsupportedFormat, decoding: stream, "\(channelCount) channels, \(bitsPerSample) bits")
    }
}
