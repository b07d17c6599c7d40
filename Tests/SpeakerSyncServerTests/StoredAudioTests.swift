import Foundation
import SpeakerSyncAudio
import SpeakerSyncStore
import Testing
@testable import SpeakerSyncServer

/// The pure parts of stored audio: cutting a session's audio into timeline chunks, putting chunks
/// back together, the WAV they make, and the byte ranges a player asks for.
@Suite struct StoredAudioTests {
    /// 16-bit PCM as the server decodes it (/32768) comes back bit-exact, in chunks of the asked
    /// length placed after the timeline offset, the last one shorter.
    @Test func chunksHoldTheDevicesSamplesExactlyOnTheTimeline() {
        let original: [Int16] = (0..<25_000).map { Int16(truncatingIfNeeded: ($0 * 7919) % 65_536 - 32_768) } + [32_767, -32_768]
        var chunker = AudioChunker(sampleRate: 8_000, timelineOffsetSeconds: 2, chunkSeconds: 1)
        var chunks = chunker.append(original.prefix(10_000).map { Float($0) / 32_768 })
        chunks += chunker.append(original.dropFirst(10_000).map { Float($0) / 32_768 })
        if let last = chunker.flush() { chunks.append(last) }
        #expect(chunks.map(\.samples.count) == [8_000, 8_000, 8_000, 1_002])
        #expect(chunks.map(\.startSample) == [16_000, 24_000, 32_000, 40_000])
        #expect(chunks.flatMap(\.samples) == original)
        #expect(chunker.flush() == nil)
    }

    /// Chunks become one timeline from 0, silence where nothing was stored; other rates are refused.
    @Test func chunksAssembleWithSilenceInTheGaps() throws {
        let chunks = [
            StoredAudioChunk(startSample: 4, sampleRate: 8_000, sampleCount: 2, flac: [2]),
            StoredAudioChunk(startSample: 0, sampleRate: 8_000, sampleCount: 2, flac: [1]),
        ]
        let audio = try #require(try StoredAudio.assemble(chunks) { chunk in chunk.flac[0] == 1 ? [10, 11] : [20, 21] })
        #expect(audio.samples == [10, 11, 0, 0, 20, 21])
        #expect(audio.durationSeconds == 6.0 / 8_000)
        #expect(try StoredAudio.assemble([]) { _ in [] } == nil)
        let mixed = chunks + [StoredAudioChunk(startSample: 6, sampleRate: 16_000, sampleCount: 1, flac: [3])]
        #expect(throws: APIError.self) { try StoredAudio.assemble(mixed) { _ in [0] } }
    }

    /// The WAV is a 16-bit mono file any reader (here the project's own) reads back as the samples.
    @Test func theWAVReadsBackAsTheSamples() throws {
        let audio = StoredAudio(sampleRate: 16_000, samples: [0, 1, -1, 32_767, -32_768, 1_234])
        let buffer = try WAVFile.decode(Data(audio.wav))
        #expect(buffer.sampleRate == 16_000)
        #expect(buffer.samples.map(PCMDecoding.quantizeS16) == audio.samples)
    }

    @Test(arguments: [
        ("bytes=0-99", 1_000, ByteRange.range(0...99)),
        ("bytes=900-", 1_000, .range(900...999)),
        ("bytes=-100", 1_000, .range(900...999)),
        ("bytes=-5000", 1_000, .range(0...999)),
        ("bytes=500-5000", 1_000, .range(500...999)),
        ("bytes=1000-", 1_000, .unsatisfiable),
    ])
    func byteRangesFollowRFC9110(header: String, length: Int, expected: ByteRange) {
        #expect(ByteRange.parse(header, length: length) == expected)
    }

    /// Forms it does not serve mean "send it all", which the RFC allows.
    @Test func otherRangeHeadersAreIgnored() {
        for header in [nil, "bytes=0-1,5-6", "items=0-1", "bytes=5-1", "bytes=x-", "bytes=-0"] {
            #expect(ByteRange.parse(header, length: 100) == nil, "\(header ?? "nil")")
        }
    }
}
