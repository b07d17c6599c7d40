import Foundation

/// Raw little-endian PCM ⇄ normalised floats: what a device's binary WebSocket frames hold.
///
/// The server decodes frames with these; the CLI and tests encode with them to stream like a device.
/// Integer samples use the ±32768 scale in both directions, so encode → decode is exact up to
/// quantisation (≤ 1/65536) for values inside [-1, 1).
public enum PCMDecoding {
    /// The two encodings a device may announce in its `start` message.
    public enum Encoding: String, Sendable, CaseIterable {
        case s16le = "pcm_s16le"
        case f32le = "pcm_f32le"

        public var bytesPerSample: Int { self == .s16le ? 2 : 4 }
    }

    /// Decodes `bytes` in the given encoding; throws `misaligned_bytes` on a partial sample.
    public static func decode(_ bytes: UnsafeRawBufferPointer, encoding: Encoding) throws -> [Float] {
        switch encoding {
        case .s16le: return try decodeS16LE(bytes)
        case .f32le: return try decodeF32LE(bytes)
        }
    }

    public static func decode(_ data: Data, encoding: Encoding) throws -> [Float] {
        try data.withUnsafeBytes { try decode($0, encoding: encoding) }
    }

    public static func decodeS16LE(_ bytes: UnsafeRawBufferPointer) throws -> [Float] {
        guard bytes.count % 2 == 0 else {
            throw AudioError(.misalignedBytes, "\(bytes.count) bytes is not a whole number of 16-bit samples")
        }
        let count = bytes.count / 2
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0 ..< count {
                let v = Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))
                out[i] = Float(v) / 32768
            }
            initialized = count
        }
    }

    public static func decodeS16LE(_ data: Data) throws -> [Float] {
        try data.withUnsafeBytes { try decodeS16LE($0) }
    }

    public static func decodeF32LE(_ bytes: UnsafeRawBufferPointer) throws -> [Float] {
        guard bytes.count % 4 == 0 else {
            throw AudioError(.misalignedBytes, "\(bytes.count) bytes is not a whole number of 32-bit samples")
        }
        let count = bytes.count / 4
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0 ..< count {
                let bits = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                out[i] = Float(bitPattern: bits)
            }
            initialized = count
        }
    }

    public static func decodeF32LE(_ data: Data) throws -> [Float] {
        try data.withUnsafeBytes { try decodeF32LE($0) }
    }

    /// Encodes as signed 16-bit little-endian, clipping to the representable range.
    public static func encodeS16LE(_ samples: some Collection<Float>) -> Data {
        var data = Data(count: samples.count * 2)
        data.withUnsafeMutableBytes { out in
            for (i, sample) in samples.enumerated() {
                out.storeBytes(of: quantizeS16(sample).littleEndian, toByteOffset: i * 2, as: Int16.self)
            }
        }
        return data
    }

    /// Encodes as 32-bit float little-endian (bit-exact).
    public static func encodeF32LE(_ samples: some Collection<Float>) -> Data {
        var data = Data(count: samples.count * 4)
        data.withUnsafeMutableBytes { out in
            for (i, sample) in samples.enumerated() {
                out.storeBytes(of: sample.bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self)
            }
        }
        return data
    }

    public static func encode(_ samples: some Collection<Float>, encoding: Encoding) -> Data {
        switch encoding {
        case .s16le: return encodeS16LE(samples)
        case .f32le: return encodeF32LE(samples)
        }
    }

    /// Rounds to the nearest 16-bit step; NaN becomes 0 so a bad sample cannot poison a file.
    @inline(__always)
    public static func quantizeS16(_ sample: Float) -> Int16 {
        guard !sample.isNaN else { return 0 }
        let scaled = (sample * 32768).rounded()
        return Int16(max(-32768, min(32767, scaled)))
    }
}
