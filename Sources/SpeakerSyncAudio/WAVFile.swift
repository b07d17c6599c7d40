import Foundation

/// Reads RIFF/WAVE files into mono `AudioBuffer`s.
///
/// Accepts PCM 8/16/24/32-bit integers, IEEE float 32/64 and WAVE_FORMAT_EXTENSIBLE headers wrapping
/// either. Unknown chunks (LIST, fact, bext, …) are skipped honouring RIFF's odd-size padding byte.
/// Multichannel audio is averaged to mono because every consumer in SpeakerSync (diarization, ASR
/// alignment) works on one channel. All failures are `AudioError` with a stable code.
public enum WAVFile {
    /// Data-chunk sizes that streaming writers put in the header when they cannot seek back to patch it
    /// (espeak-ng `--stdout` writes 0x7FFFF000; others write 0xFFFFFFFF). With these, the data runs to the
    /// end of the file; any other size larger than the file is reported as `truncated`.
    static let streamingDataSizes: Set<UInt32> = [0xFFFF_FFFF, 0x7FFF_F000, 0x7FFF_FFFF]

    /// The fastest rate accepted, 1 MHz: above any audio converter (768 kHz is the fastest sold).
    public static let maxSampleRate = 1_000_000

    /// Reads and decodes the file at `url`.
    public static func read(contentsOf url: URL) throws -> AudioBuffer {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw AudioError(.io, "cannot read \(url.path): \(error.localizedDescription)")
        }
        return try decode(data)
    }

    /// Decodes a complete WAV file held in memory.
    public static func decode(_ data: Data) throws -> AudioBuffer {
        try data.withUnsafeBytes { raw in
            let layout = try parseLayout(raw)
            let samples = decodeFrames(raw, layout: layout)
            return AudioBuffer(samples: samples, sampleRate: layout.format.sampleRate)
        }
    }

    /// Reads only the header: the format and how many frames the data chunk holds.
    public static func inspect(_ data: Data) throws -> (format: WAVFormat, frameCount: Int) {
        try data.withUnsafeBytes { raw in
            let layout = try parseLayout(raw)
            return (layout.format, layout.dataByteCount / layout.format.blockAlign)
        }
    }

    struct Layout {
        var format: WAVFormat
        var dataOffset: Int
        var dataByteCount: Int
    }

    static func parseLayout(_ raw: UnsafeRawBufferPointer) throws -> Layout {
        guard raw.count >= 12 else {
            if raw.count >= 4, fourCC(raw, 0) == "RIFF" {
                throw AudioError(.truncated, "file ends inside the RIFF header (\(raw.count) bytes)")
            }
            throw AudioError(.notRIFF, "file is \(raw.count) bytes, too short for a RIFF header")
        }
        let magic = fourCC(raw, 0)
        if magic == "RF64" || magic == "RIFX" {
            throw AudioError(.unsupportedFormat, "\(magic) containers are not supported")
        }
        guard magic == "RIFF" else { throw AudioError(.notRIFF, "file does not start with RIFF") }
        guard fourCC(raw, 8) == "WAVE" else { throw AudioError(.notWAVE, "RIFF form type is not WAVE") }

        var format: WAVFormat?
        var offset = 12
        while offset + 8 <= raw.count {
            let id = fourCC(raw, offset)
            let size = u32(raw, offset + 4)
            let bodyOffset = offset + 8
            let remaining = raw.count - bodyOffset
            if id == "data" {
                guard let format else {
                    throw AudioError(.missingFormat, "data chunk comes before any fmt chunk")
                }
                var byteCount = Int(size)
                if byteCount > remaining {
                    guard streamingDataSizes.contains(size) else {
                        throw AudioError(.truncated, "data chunk claims \(size) bytes, file holds \(remaining)")
                    }
                    byteCount = remaining
                }
                // A trailing partial frame cannot be decoded; drop it rather than fail the whole file.
                byteCount -= byteCount % format.blockAlign
                return Layout(format: format, dataOffset: bodyOffset, dataByteCount: byteCount)
            }
            guard Int(size) <= remaining else {
                throw AudioError(.truncated, "chunk '\(id)' claims \(size) bytes, file holds \(remaining)")
            }
            if id == "fmt " {
                format = try parseFormat(raw, offset: bodyOffset, size: Int(size))
            }
            offset = bodyOffset + Int(size) + Int(size & 1)
        }
        if format == nil { throw AudioError(.missingFormat, "no fmt chunk") }
        throw AudioError(.missingData, "no data chunk")
    }

    static func parseFormat(_ raw: UnsafeRawBufferPointer, offset: Int, size: Int) throws -> WAVFormat {
        guard size >= 16 else { throw AudioError(.invalidFormat, "fmt chunk is \(size) bytes, need 16") }
        var tag = u16(raw, offset)
        let channels = Int(u16(raw, offset + 2))
        let rate = Int(u32(raw, offset + 4))
        let blockAlign = Int(u16(raw, offset + 12))
        let bits = Int(u16(raw, offset + 14))
        var extensible = false
        if tag == WAVFormatTag.extensible {
            guard size >= 40, u16(raw, offset + 16) >= 22 else {
                throw AudioError(.invalidFormat, "WAVE_FORMAT_EXTENSIBLE fmt chunk is \(size) bytes, need 40")
            }
            // SubFormat GUID: the first two bytes are the real format tag, the rest is the fixed
            // KSDATAFORMAT suffix 00000000-0010-8000-00AA00389B71.
            let guidSuffix: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                       0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
            for (i, byte) in guidSuffix.enumerated() where raw[offset + 26 + i] != byte {
                throw AudioError(.unsupportedFormat, "unknown WAVE_FORMAT_EXTENSIBLE sub-format GUID")
            }
            tag = u16(raw, offset + 24)
            extensible = true
        }
        let encoding: WAVFormat.Encoding
        switch tag {
        case WAVFormatTag.pcm:
            guard [8, 16, 24, 32].contains(bits) else {
                throw AudioError(.unsupportedFormat, "\(bits)-bit PCM is not supported")
            }
            encoding = .pcmInteger
        case WAVFormatTag.ieeeFloat:
            guard bits == 32 || bits == 64 else {
                throw AudioError(.unsupportedFormat, "\(bits)-bit float is not supported")
            }
            encoding = .ieeeFloat
        default:
            throw AudioError(.unsupportedFormat, String(format: "format tag 0x%04X is not supported", tag))
        }
        guard channels >= 1 else { throw AudioError(.invalidFormat, "zero channels") }
        guard rate >= 1 else { throw AudioError(.invalidFormat, "zero sample rate") }
        // A header may claim any 32-bit rate; one of gigahertz (found by Fuzz/FuzzWAVFile) made
        // WAVWriter trap on a byte rate it cannot write, and every consumer sizes work by the rate.
        guard rate <= maxSampleRate else {
            throw AudioError(.unsupportedFormat, "sample rate \(rate) Hz is above \(maxSampleRate) Hz")
        }
        guard blockAlign == channels * bits / 8 else {
            throw AudioError(.invalidFormat,
                             "block align \(blockAlign) != \(channels) channels × \(bits / 8) bytes")
        }
        return WAVFormat(encoding: encoding, channelCount: channels, sampleRate: rate,
                         bitsPerSample: bits, blockAlign: blockAlign, isExtensible: extensible)
    }

    static func decodeFrames(_ raw: UnsafeRawBufferPointer, layout: Layout) -> [Float] {
        let format = layout.format
        let channels = format.channelCount
        let bytesPerSample = format.bitsPerSample / 8
        let frameCount = layout.dataByteCount / format.blockAlign
        let sampleCount = frameCount * channels
        let base = UnsafeRawBufferPointer(rebasing: raw[layout.dataOffset ..< layout.dataOffset + layout.dataByteCount])

        // Decode every interleaved sample, then average channels; one switch outside the loops.
        var interleaved = [Float](repeating: 0, count: sampleCount)
        interleaved.withUnsafeMutableBufferPointer { out in
            switch (format.encoding, bytesPerSample) {
            case (.pcmInteger, 1):
                for i in 0 ..< sampleCount { out[i] = (Float(base[i]) - 128) / 128 }
            case (.pcmInteger, 2):
                for i in 0 ..< sampleCount {
                    let v = Int16(littleEndian: base.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))
                    out[i] = Float(v) / 32768
                }
            case (.pcmInteger, 3):
                for i in 0 ..< sampleCount {
                    let b = i * 3
                    let u = UInt32(base[b]) << 8 | UInt32(base[b + 1]) << 16 | UInt32(base[b + 2]) << 24
                    out[i] = Float(Int32(bitPattern: u) >> 8) / 8_388_608
                }
            case (.pcmInteger, 4):
                for i in 0 ..< sampleCount {
                    let v = Int32(littleEndian: base.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))
                    out[i] = Float(Double(v) / 2_147_483_648)
                }
            case (.ieeeFloat, 4):
                for i in 0 ..< sampleCount {
                    let bits = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    out[i] = Float(bitPattern: bits)
                }
            case (.ieeeFloat, 8):
                for i in 0 ..< sampleCount {
                    let bits = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                    out[i] = Float(Double(bitPattern: bits))
                }
            default:
                break  // parseFormat admits only the combinations above
            }
        }
        guard channels > 1 else { return interleaved }
        var mono = [Float](repeating: 0, count: frameCount)
        let scale = 1 / Float(channels)
        for frame in 0 ..< frameCount {
            var sum: Float = 0
            for channel in 0 ..< channels { sum += interleaved[frame * channels + channel] }
            mono[frame] = sum * scale
        }
        return mono
    }

    static func fourCC(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> String {
        String(decoding: raw[offset ..< offset + 4], as: UTF8.self)
    }

    static func u16(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    static func u32(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
