/// A stream's STREAMINFO block, the FLAC format's one mandatory header: the format the frames
/// promise, how many samples they add up to, and their MD5.
struct FLACStreamInfo: Sendable, Equatable {
    var minimumBlockSize: Int
    var maximumBlockSize: Int
    /// Bytes; 0 when unknown.
    var minimumFrameSize: Int
    var maximumFrameSize: Int
    var sampleRate: Int
    var channelCount: Int
    var bitsPerSample: Int
    /// Samples per channel in the whole stream; 0 when the encoder did not know (a valid FLAC stream
    /// may leave it unset, so it is only checked when set).
    var totalSampleCount: Int
    /// MD5 of the decoded audio; all zero when unknown.
    var md5Signature: [UInt8]

    /// The bytes of a STREAMINFO block's body (34 of them), as the format lays them out.
    static let encodedByteCount = 34

    /// What FLACCodec stores and reads back: session audio is 16-bit mono.
    var isSixteenBitMono: Bool { channelCount == 1 && bitsPerSample == 16 }

    /// The block's body, big-endian, its fields masked to their widths (libFLAC's values always fit).
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.encodedByteCount)
        func put(_ value: UInt64, byteCount: Int) {
            for index in (0..<byteCount).reversed() { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        put(UInt64(truncatingIfNeeded: minimumBlockSize), byteCount: 2)
        put(UInt64(truncatingIfNeeded: maximumBlockSize), byteCount: 2)
        put(UInt64(truncatingIfNeeded: minimumFrameSize), byteCount: 3)
        put(UInt64(truncatingIfNeeded: maximumFrameSize), byteCount: 3)
        // Rate (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36): 64 bits.
        let packed = (UInt64(truncatingIfNeeded: sampleRate) & 0xF_FFFF) << 44
            | (UInt64(truncatingIfNeeded: channelCount - 1) & 0x7) << 41
            | (UInt64(truncatingIfNeeded: bitsPerSample - 1) & 0x1F) << 36
            | (UInt64(truncatingIfNeeded: totalSampleCount) & 0xF_FFFF_FFFF)
        put(packed, byteCount: 8)
        bytes += md5Signature.prefix(16)
        bytes += [UInt8](repeating: 0, count: 16 - min(16, md5Signature.count))
        return bytes
    }
}
