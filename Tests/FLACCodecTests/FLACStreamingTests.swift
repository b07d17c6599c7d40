import FLACCodec
import Testing

/// The streaming encoder: audio appended as it arrives makes the same audio as one call with all of it.
@Suite struct FLACStreamingTests {
    @Test func appendingInPiecesDecodesLikeOneShot() throws {
        let samples = FLACTestSignals.tone(hertz: 220, seconds: 3, sampleRate: 16_000)
            + FLACTestSignals.noise(count: 5_000, seed: 3)
        let oneShot = try FLACDecoder.decode(try FLACEncoder.encode(samples, sampleRate: 16_000))

        let encoder = try FLACEncoder(sampleRate: 16_000)
        #expect(encoder.sampleRate == 16_000)
        // Pieces smaller than, equal to and larger than a 4096-sample block, and an empty one.
        var start = 0
        for size in [1, 0, 4_095, 4_096, 4_097, 10_000, 333] {
            try encoder.append(Array(samples[start..<start + size]))
            start += size
        }
        try encoder.append(Array(samples[start...]))
        let streamed = try FLACDecoder.decode(try encoder.finish())

        #expect(streamed.sampleRate == 16_000)
        #expect(streamed.samples == oneShot.samples)
        #expect(streamed.samples == samples)
    }

    @Test func finishCompletesTheStreamInfo() throws {
        let samples = FLACTestSignals.tone(hertz: 220, seconds: 2, sampleRate: 16_000)
        let encoder = try FLACEncoder(sampleRate: 16_000)
        try encoder.append(Array(samples[..<7_000]))
        try encoder.append(Array(samples[7_000...]))
        let streamed = try encoder.finish()
        // The count was unknown when the stream began; the final STREAMINFO has it, and the frame sizes
        // and MD5 too, so the stream is the one-shot encoder's byte for byte.
        #expect(FLACTestSignals.totalSampleCount(streamed) == samples.count)
        #expect(streamed == (try FLACEncoder.encode(samples, sampleRate: 16_000)))
        // A cut at a frame boundary leaves whole frames only, caught by the count alone.
        let frames = FLACTestSignals.frameOffsets(streamed)
        try #require(frames.count == (samples.count + 4_095) / 4_096, "frames found at \(frames)")
        #expect { try FLACDecoder.decode(Array(streamed[..<frames.last!])) } throws: {
            ($0 as? FLACError)?.code == .corruptStream
        }
    }

    @Test func anEmptyStreamFinishes() throws {
        let encoder = try FLACEncoder(sampleRate: 8_000)
        let decoded = try FLACDecoder.decode(try encoder.finish())
        #expect(decoded.samples.isEmpty)
        #expect(decoded.sampleRate == 8_000)
    }

    @Test func aFinishedEncoderRefusesMore() throws {
        let encoder = try FLACEncoder(sampleRate: 16_000)
        try encoder.append([1, 2, 3])
        _ = try encoder.finish()
        #expect { try encoder.append([4]) } throws: { ($0 as? FLACError)?.code == .encodingFailed }
        #expect { try encoder.finish() } throws: { ($0 as? FLACError)?.code == .encodingFailed }
    }
}
