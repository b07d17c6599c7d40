extension Speaker {
    /// Bytes of embedding values held: the `Float` profile plus the half-precision history.
    /// With 256 dimensions and a full 50-entry history: 1 024 + 50 × 512 = 26 624 bytes.
    public var storedEmbeddingBytes: Int {
        currentEmbedding.count * MemoryLayout<Float>.stride
            + rawEmbeddings.reduce(0) { $0 + $1.halfPrecisionBits.count * MemoryLayout<UInt16>.stride }
    }

    /// Structural size of the profile: the inline struct, every heap buffer by its capacity, array and
    /// string headers. Allocator rounding is not included; buffers shared with copies are counted here.
    public var estimatedMemoryBytes: Int {
        var total = MemoryLayout<Speaker>.stride
        total += Self.arrayHeaderBytes + currentEmbedding.capacity * MemoryLayout<Float>.stride
        total += Self.arrayHeaderBytes + rawEmbeddings.capacity * MemoryLayout<RawEmbedding>.stride
        for raw in rawEmbeddings {
            total += Self.arrayHeaderBytes + raw.halfPrecisionBits.capacity * MemoryLayout<UInt16>.stride
        }
        return total + Self.heapBytes(of: id) + Self.heapBytes(of: name)
    }

    /// A native array buffer's header: the object header (metadata pointer and reference counts) plus
    /// count and capacity, one word each.
    static let arrayHeaderBytes = 4 * MemoryLayout<Int>.stride

    /// Strings of up to 15 UTF-8 bytes live inline in the `String` value; longer ones in a heap buffer.
    static func heapBytes(of string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : arrayHeaderBytes + count + 1
    }
}
