import Foundation

/// Reads ge2e.bin, the file scripts/python/convert_ge2e.py writes from resemblyzer's pretrained.pt.
///
/// Format, version 1 (all integers little-endian):
///
///     offset 0   4 bytes  magic "GE2E"
///     offset 4   u32      version (1)
///     offset 8   u32      tensor count N
///     offset 12  u32      CRC-32 (zlib polynomial) of the data region, bytes [data_start, end of file)
///     offset 16  u32      data_start, a multiple of 64
///     offset 20  N entries: u16 name length, UTF-8 name, u8 rank R, R × u32 dimensions (outermost
///                first), u64 absolute offset of the tensor's first float32 (a multiple of 64);
///                zero bytes up to data_start
///     data       each tensor's float32 values in row-major order at its offset
///
/// The checksum is verified because a half-copied or damaged file would otherwise load and produce
/// plausible-looking but wrong embeddings.
enum GE2EModelFile {
    static let magic: [UInt8] = Array("GE2E".utf8)
    static let version: UInt32 = 1
    static let headerSize = 20
    static let alignment = 64

    struct Entry {
        var name: String
        var shape: [Int]
        var byteOffset: Int
        var elementCount: Int { shape.reduce(1, *) }
    }

    static func read(contentsOf url: URL) throws -> GE2EWeights {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw SpeakerEmbeddingError(.modelNotFound, "\(url.path) does not exist (run scripts/setup)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw SpeakerEmbeddingError(.modelUnreadable, "cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            return try decode(data)
        } catch var error as SpeakerEmbeddingError {
            error.message = "\(url.path): \(error.message)"
            throw error
        }
    }

    static func decode(_ data: Data) throws -> GE2EWeights {
        try data.withUnsafeBytes { raw in
            let entries = try parseHeader(raw)
            var tensors: [String: [Float]] = [:]
            for (name, shape) in GE2EWeights.expectedShapes {
                guard let entry = entries[name] else {
                    throw SpeakerEmbeddingError(.missingTensor, "no tensor \(name)")
                }
                guard entry.shape == shape else {
                    throw SpeakerEmbeddingError(.wrongShape, "\(name) has shape \(entry.shape), the network needs \(shape)")
                }
                tensors[name] = floats(raw, at: entry.byteOffset, count: entry.elementCount)
            }
            func tensor(_ name: String) -> [Float] { tensors[name]! }
            func transposed(_ name: String) -> [Float] {
                let shape = entries[name]!.shape, rows = shape[0], columns = shape[1], values = tensors[name]!
                var result = [Float](repeating: 0, count: values.count)
                for row in 0 ..< rows { for column in 0 ..< columns { result[column * rows + row] = values[row * columns + column] } }
                return result
            }
            let layers = (0 ..< GE2EWeights.layerCount).map { layer in
                GE2EWeights.LSTMLayer(
                    inputWeights: transposed("lstm.weight_ih_l\(layer)"),
                    recurrentWeights: transposed("lstm.weight_hh_l\(layer)"),
                    bias: zip(tensor("lstm.bias_ih_l\(layer)"), tensor("lstm.bias_hh_l\(layer)")).map { $0 + $1 },
                    inputSize: layer == 0 ? GE2EWeights.melChannelCount : GE2EWeights.hiddenSize)
            }
            return GE2EWeights(
                layers: layers, projectionWeights: transposed("linear.weight"), projectionBias: tensor("linear.bias"))
        }
    }

    /// Validates magic, version, checksum and every entry's bounds; returns the entries by name.
    static func parseHeader(_ raw: UnsafeRawBufferPointer) throws -> [String: Entry] {
        guard raw.count >= magic.count, Array(raw.prefix(magic.count)) == magic else {
            throw SpeakerEmbeddingError(.badMagic, "the file does not start with \"GE2E\": not a converted GE2E model")
        }
        guard raw.count >= headerSize else {
            throw SpeakerEmbeddingError(.truncated, "the file ends inside its \(headerSize)-byte header (\(raw.count) bytes)")
        }
        let fileVersion = u32(raw, 4)
        guard fileVersion == version else {
            throw SpeakerEmbeddingError(.unsupportedVersion, "format version \(fileVersion); this build reads version \(version)")
        }
        let count = Int(u32(raw, 8))
        let storedChecksum = u32(raw, 12)
        let dataStart = Int(u32(raw, 16))
        guard count <= 1024, dataStart % alignment == 0, dataStart >= headerSize else {
            throw SpeakerEmbeddingError(.malformedHeader, "tensor count \(count) or data start \(dataStart) is impossible")
        }
        guard dataStart <= raw.count else {
            throw SpeakerEmbeddingError(.truncated, "the data region starts at byte \(dataStart) but the file has \(raw.count)")
        }
        var entries: [String: Entry] = [:]
        var position = headerSize
        func need(_ bytes: Int) throws {
            guard position + bytes <= min(dataStart, raw.count) else {
                throw SpeakerEmbeddingError(
                    position + bytes > raw.count ? .truncated : .malformedHeader,
                    "tensor entry \(entries.count + 1) of \(count) runs past byte \(min(dataStart, raw.count))")
            }
        }
        for _ in 0 ..< count {
            try need(2)
            let nameLength = Int(u16(raw, position))
            position += 2
            try need(nameLength + 1)
            guard let name = String(validating: UnsafeRawBufferPointer(rebasing: raw[position ..< position + nameLength]), as: UTF8.self) else {
                throw SpeakerEmbeddingError(.malformedHeader, "tensor entry \(entries.count + 1) has a name that is not UTF-8")
            }
            position += nameLength
            let rank = Int(raw[position])
            position += 1
            try need(4 * rank + 8)
            let shape = (0 ..< rank).map { Int(u32(raw, position + 4 * $0)) }
            position += 4 * rank
            let offset = u64(raw, position)
            position += 8
            let elementCount = shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).partialValue }
            guard offset % UInt64(alignment) == 0, offset >= UInt64(dataStart), offset <= UInt64(Int.max / 2),
                  shape.allSatisfy({ $0 <= 1 << 24 }), elementCount <= 1 << 26
            else {
                throw SpeakerEmbeddingError(.malformedHeader, "\(name): offset \(offset) or shape \(shape) is impossible")
            }
            let entry = Entry(name: name, shape: shape, byteOffset: Int(offset))
            guard entry.byteOffset + 4 * elementCount <= raw.count else {
                throw SpeakerEmbeddingError(
                    .truncated, "\(name) needs bytes up to \(entry.byteOffset + 4 * elementCount); the file has \(raw.count)")
            }
            entries[name] = entry
        }
        let checksum = CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[dataStart...]))
        guard checksum == storedChecksum else {
            throw SpeakerEmbeddingError(
                .checksumMismatch,
                "data CRC-32 is \(String(checksum, radix: 16)), the header says \(String(storedChecksum, radix: 16)): the file is damaged (rerun scripts/setup)")
        }
        return entries
    }

    private static func u16(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    private static func u32(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private static func u64(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static func floats(_ raw: UnsafeRawBufferPointer, at offset: Int, count: Int) -> [Float] {
        (0 ..< count).map { index in
            Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4 * index, as: UInt32.self)))
        }
    }
}
