import Foundation
import DeterministicRandom

/// Audio and stream surgery shared by the FLAC suites.
enum FLACTestSignals {
    /// Float samples as 16-bit PCM the way SpeakerSync sends and stores them (SpeakerSyncKit's
    /// PCMEncoding and the console's worklet): clipped to [-1, 1], scaled by 32767, rounded.
    static func pcm16(_ samples: [Float]) -> [Int16] {
        samples.map { sample in
            let clipped = max(-1, min(1, sample.isFinite ? sample : 0))
            return Int16((clipped * 32767).rounded())
        }
    }

    static func tone(hertz: Double, seconds: Double, sampleRate: Int, amplitude: Double = 0.5) -> [Int16] {
        (0..<Int(seconds * Double(sampleRate))).map { index in
            Int16((amplitude * 32767 * sin(2 * Double.pi * hertz * Double(index) / Double(sampleRate))).rounded())
        }
    }

    /// Full-scale square wave: the extremes of Int16, which any narrowing or sign slip would break.
    static func fullScaleSquare(count: Int, halfPeriod: Int) -> [Int16] {
        (0..<count).map { ($0 / halfPeriod) % 2 == 0 ? Int16.max : Int16.min }
    }

    /// Uniform noise over all of Int16: nothing to predict, so FLAC falls back to verbatim subframes.
    static func noise(count: Int, seed: UInt64) -> [Int16] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in Int16(truncatingIfNeeded: random.next()) }
    }

    static func bytes(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// Where the audio frames of a native FLAC stream start: after "fLaC" and the metadata blocks
    /// (each a 4-byte header, its top bit marking the last, then a 24-bit length).
    static func audioOffset(_ stream: [UInt8]) -> Int {
        var offset = 4
        while true {
            let isLast = stream[offset] & 0x80 != 0
            let length = Int(stream[offset + 1]) << 16 | Int(stream[offset + 2]) << 8 | Int(stream[offset + 3])
            offset += 4 + length
            if isLast { return offset }
        }
    }

    /// Where each audio frame starts, found by the sync code 0xFFF8 (fixed block size) frames begin
    /// with. The code can also occur inside a frame body, so callers check the count they get.
    static func frameOffsets(_ stream: [UInt8]) -> [Int] {
        let audio = audioOffset(stream)
        return (audio..<stream.count - 1).filter { stream[$0] == 0xFF && stream[$0 + 1] == 0xF8 }
    }

    /// STREAMINFO's MD5 of the audio: the block's last 16 bytes.
    static let md5Range = 26..<42

    /// STREAMINFO's total sample count (36 bits from bit 4 of byte 21) read from, or written into,
    /// a stream whose first block is STREAMINFO (as libFLAC writes it).
    static func totalSampleCount(_ stream: [UInt8]) -> Int {
        (0..<4).reduce(Int(stream[21] & 0x0F)) { $0 << 8 | Int(stream[22 + $1]) }
    }

    static func settingTotalSampleCount(_ count: Int, in stream: [UInt8]) -> [UInt8] {
        var patched = stream
        patched[21] = patched[21] & 0xF0 | UInt8(count >> 32 & 0x0F)
        for index in 0..<4 { patched[22 + index] = UInt8(truncatingIfNeeded: count >> (24 - 8 * index)) }
        return patched
    }
}
