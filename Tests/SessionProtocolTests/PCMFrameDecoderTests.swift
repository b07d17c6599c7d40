import Testing

@testable import SessionProtocol
import DeterministicRandom

@Suite struct PCMFrameDecoderTests {
    @Test func decodesS16LEValues() {
        var decoder = PCMFrameDecoder(encoding: .pcmS16LE)
        // 0, 1, -1, 32767, -32768 little-endian.
        let samples = decoder.decode([0x00, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80])
        let expected: [Float] = [0, 1 / 32_768, -1 / 32_768, 32_767 / 32_768, -1]
        #expect(samples == expected)
        #expect(decoder.sampleCount == 5)
    }

    @Test func decodesF32LEValuesAndZeroesNonFinite() {
        var decoder = PCMFrameDecoder(encoding: .pcmF32LE)
        let values: [Float] = [0.5, -0.25, .nan, .infinity, 1e-30]
        let bytes = values.flatMap { value in
            withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) }
        }
        #expect(decoder.decode(bytes) == [0.5, -0.25, 0, 0, 1e-30])
    }

    @Test(arguments: [AudioEncoding.pcmS16LE, .pcmF32LE])
    func randomSplitsDecodeLikeTheWhole(encoding: AudioEncoding) {
        var random = SeededRandom(seed: encoding == .pcmS16LE ? 16 : 32)
        for _ in 0..<200 {
            let byteCount = Int.random(in: 0...400, using: &random)
            let bytes = (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
            var whole = PCMFrameDecoder(encoding: encoding)
            let expected = whole.decode(bytes)

            var split = PCMFrameDecoder(encoding: encoding)
            var decoded: [Float] = []
            var index = 0
            while index < bytes.count {
                let length = Int.random(in: 0...min(9, bytes.count - index), using: &random)
                decoded += split.decode(Array(bytes[index..<(index + length)]))
                index += length
            }
            // Compare bit patterns: equal NaN payloads can't occur (they're zeroed) but -0 vs 0 could.
            #expect(decoded.map(\.bitPattern) == expected.map(\.bitPattern))
            #expect(expected.count == byteCount / encoding.bytesPerSample!)
            #expect(expected.map(\.bitPattern) == Self.reference(bytes, encoding).map(\.bitPattern))
            #expect(split.sampleCount == whole.sampleCount)
            #expect(split.pendingBytes == whole.pendingBytes)
            #expect(split.finish() == byteCount % encoding.bytesPerSample!)
        }
    }

    /// Decoding by unaligned loads of the host's native types (little-endian on every supported host).
    static func reference(_ bytes: [UInt8], _ encoding: AudioEncoding) -> [Float] {
        let width = encoding.bytesPerSample!
        return bytes.withUnsafeBytes { raw in
            stride(from: 0, to: bytes.count - width + 1, by: width).map { offset in
                switch encoding {
                case .pcmS16LE:
                    return Float(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
                        / 32_768
                case .pcmF32LE:
                    let value = raw.loadUnaligned(fromByteOffset: offset, as: Float.self)
                    return value.isFinite ? value : 0
                case .opus:
                    preconditionFailure("Opus is not PCM")
                }
            }
        }
    }

    @Test func oneByteFramesCarryPartialSamples() {
        var decoder = PCMFrameDecoder(encoding: .pcmF32LE)
        let bytes = withUnsafeBytes(of: Float(0.75).bitPattern.littleEndian) { Array($0) }
        #expect(decoder.decode([bytes[0]]).isEmpty)
        #expect(decoder.decode([bytes[1]]).isEmpty)
        #expect(decoder.decode([bytes[2]]).isEmpty)
        #expect(decoder.pendingBytes.count == 3)
        #expect(decoder.decode([bytes[3], 0x00]) == [0.75])
        #expect(decoder.finish() == 1)
        #expect(decoder.pendingBytes.isEmpty)
    }
}
