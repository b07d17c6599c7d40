import Foundation
import Testing
@testable import SpeakerSyncAudio

@Suite struct PCMDecodingTests {
    @Test func s16leMatchesTheRealFileBytes() throws {
        // The data chunk of sample.wav is raw s16le: decoding its bytes must equal the WAV reader's view.
        let file = try Data(contentsOf: TestData.sampleWAV)
        let reader = try WAVFile.read(contentsOf: TestData.sampleWAV)
        let payload = file.suffix(reader.samples.count * 2)
        let decoded = try PCMDecoding.decode(Data(payload), encoding: .s16le)
        #expect(decoded == reader.samples)
        #expect(PCMDecoding.encodeS16LE(decoded) == Data(payload))
    }

    @Test func f32leIsBitExact() throws {
        let samples: [Float] = [0, -0, 1, -1, 0.1, 3.5, -1e-30, .greatestFiniteMagnitude]
        let bytes = PCMDecoding.encode(samples, encoding: .f32le)
        #expect(bytes.count == samples.count * 4)
        #expect(bytes.prefix(4) == Data([0, 0, 0, 0]))
        #expect(bytes[8 ..< 12] == Data([0x00, 0x00, 0x80, 0x3F]))  // 1.0f little-endian
        let back = try PCMDecoding.decodeF32LE(bytes)
        #expect(back.map(\.bitPattern) == samples.map(\.bitPattern))
    }

    @Test func s16leQuantisesAndClips() throws {
        let bytes = PCMDecoding.encodeS16LE([0.5, -0.5, 2, -2, .nan, 1.0 / 32_768])
        #expect(Array(bytes) == [0x00, 0x40, 0x00, 0xC0, 0xFF, 0x7F, 0x00, 0x80, 0x00, 0x00, 0x01, 0x00])
        #expect(try PCMDecoding.decodeS16LE(bytes) == [0.5, -0.5, 32_767.0 / 32_768, -1, 0, 1.0 / 32_768])
    }

    @Test func partialSamplesAreRejected() {
        #expect { _ = try PCMDecoding.decode(Data([1, 2, 3]), encoding: .s16le) } throws: {
            ($0 as? AudioError)?.code == .misalignedBytes
        }
        #expect { _ = try PCMDecoding.decode(Data([1, 2, 3, 4, 5, 6]), encoding: .f32le) } throws: {
            ($0 as? AudioError)?.code == .misalignedBytes
        }
        #expect(PCMDecoding.Encoding(rawValue: "pcm_s16le") == .s16le)
    }
}
