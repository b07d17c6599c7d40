/// Turns binary audio frames into Float samples, carrying a partial sample across frames.
///
/// WebSocket frames are not aligned to samples: a client may cut its byte stream anywhere, so the
/// 1–3 bytes of a sample split by a frame boundary are kept and completed by the next frame. Decoding
/// a stream in any split therefore gives exactly the samples of decoding it in one piece.
public struct PCMFrameDecoder: Hashable, Sendable {
    public let encoding: AudioEncoding
    /// Bytes of an incomplete trailing sample (fewer than `encoding.bytesPerSample`).
    public private(set) var pendingBytes: [UInt8] = []
    /// Samples produced so far.
    public private(set) var sampleCount: Int64 = 0

    private let width: Int

    /// `encoding` must be a PCM encoding (Opus packets are not a byte stream of samples).
    public init(encoding: AudioEncoding) {
        guard let width = encoding.bytesPerSample else { preconditionFailure("\(encoding) is not PCM") }
        self.encoding = encoding
        self.width = width
    }

    /// Decodes `bytes` (continuing any pending partial sample).
    ///
    /// s16le is scaled by 1/32768 to -1…1. f32le is taken as is, except that NaN and ±infinity
    /// (which no microphone produces, and which would poison a provider's arithmetic) become 0.
    public mutating func decode(_ bytes: [UInt8]) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity((pendingBytes.count + bytes.count) / width)
        var index = 0
        if !pendingBytes.isEmpty {
            let needed = width - pendingBytes.count
            guard bytes.count >= needed else {
                pendingBytes += bytes
                return []
            }
            var sampleBytes = pendingBytes
            sampleBytes += bytes[0..<needed]
            samples.append(decodeSample(sampleBytes, at: 0))
            index = needed
            pendingBytes.removeAll()
        }
        bytes.withUnsafeBufferPointer { buffer in
            while index + width <= buffer.count {
                samples.append(decodeSample(buffer, at: index))
                index += width
            }
        }
        pendingBytes = Array(bytes[index...])
        sampleCount += Int64(samples.count)
        return samples
    }

    /// Ends the stream. The bytes of a trailing incomplete sample cannot be a sample and are dropped;
    /// returns how many were dropped (0 for a well-formed stream).
    public mutating func finish() -> Int {
        defer { pendingBytes.removeAll() }
        return pendingBytes.count
    }

    private func decodeSample<C: RandomAccessCollection>(_ bytes: C, at offset: Int) -> Float
    where C.Element == UInt8, C.Index == Int {
        let base = bytes.startIndex + offset
        switch encoding {
        case .pcmS16LE:
            let bits = UInt16(bytes[base]) | UInt16(bytes[base + 1]) << 8
            return Float(Int16(bitPattern: bits)) / 32_768
        case .opus:
            return 0  // unreachable: init refuses Opus
        case .pcmF32LE:
            let bits =
                UInt32(bytes[base]) | UInt32(bytes[base + 1]) << 8 | UInt32(bytes[base + 2]) << 16
                | UInt32(bytes[base + 3]) << 24
            let value = Float(bitPattern: bits)
            return value.isFinite ? value : 0
        }
    }
}
