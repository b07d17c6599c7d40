import Foundation

/// Writes mono WAV files: 16-bit PCM (compact, what the demo and tests hand to people and tools) or
/// 32-bit float (lossless for intermediate results).
public enum WAVWriter {
    public enum SampleFormat: String, Sendable {
        case pcm16
        case float32
    }

    /// Serialises `buffer` as a complete WAV file.
    public static func encode(_ buffer: AudioBuffer, format: SampleFormat = .pcm16) -> Data {
        let payload: Data
        switch format {
        case .pcm16: payload = PCMDecoding.encodeS16LE(buffer.samples)
        case .float32: payload = PCMDecoding.encodeF32LE(buffer.samples)
        }
        let bytesPerSample = format == .pcm16 ? 2 : 4
        var out = Data()
        out.reserveCapacity(payload.count + 64)
        // Float files carry the 18-byte fmt (cbSize = 0) and a fact chunk, as the spec asks for
        // non-PCM formats; PCM keeps the classic 16-byte fmt that every reader understands.
        let fmtSize: UInt32 = format == .pcm16 ? 16 : 18
        let factSize: UInt32 = format == .pcm16 ? 0 : 12
        let riffSize = 4 + (8 + fmtSize) + factSize + 8 + UInt32(payload.count) + UInt32(payload.count & 1)
        out.appendASCII("RIFF"); out.appendLE(riffSize); out.appendASCII("WAVE")
        out.appendASCII("fmt "); out.appendLE(fmtSize)
        out.appendLE(format == .pcm16 ? WAVFormatTag.pcm : WAVFormatTag.ieeeFloat)
        out.appendLE(UInt16(1))
        out.appendLE(UInt32(buffer.sampleRate))
        out.appendLE(UInt32(buffer.sampleRate * bytesPerSample))
        out.appendLE(UInt16(bytesPerSample))
        out.appendLE(UInt16(bytesPerSample * 8))
        if format == .float32 {
            out.appendLE(UInt16(0))
            out.appendASCII("fact"); out.appendLE(UInt32(4)); out.appendLE(UInt32(buffer.samples.count))
        }
        out.appendASCII("data"); out.appendLE(UInt32(payload.count))
        out.append(payload)
        if payload.count & 1 == 1 { out.append(0) }
        return out
    }

    /// Writes `buffer` to `url` atomically.
    public static func write(_ buffer: AudioBuffer, to url: URL, format: SampleFormat = .pcm16) throws {
        do {
            try encode(buffer, format: format).write(to: url, options: .atomic)
        } catch {
            throw AudioError(.io, "cannot write \(url.path): \(error.localizedDescription)")
        }
    }
}

extension Data {
    mutating func appendASCII(_ string: String) { append(contentsOf: Array(string.utf8)) }

    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
