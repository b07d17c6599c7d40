/// One Ogg page (RFC 3533 §6): the header fields a demuxer needs and the page's packet pieces.
struct OggPage: Sendable {
    static let captureSignature: [UInt8] = Array("OggS".utf8)

    var isContinuation: Bool
    var isBeginningOfStream: Bool
    var isEndOfStream: Bool
    var granulePosition: Int64
    var serialNumber: UInt32
    var sequenceNumber: UInt32
    /// The page's segments grouped into packet pieces by the lacing values. A piece whose last lacing
    /// value is 255 is not ended here: the packet continues on the next page.
    var pieces: [(bytes: ArraySlice<UInt8>, ended: Bool)]
    /// Bytes the page occupies in the file.
    var byteCount: Int

    /// Parses the page starting at `offset`, checking its CRC.
    init(_ data: [UInt8], at offset: Int) throws(OggOpusError) {
        guard offset + 27 <= data.count else { throw .truncated("page header at byte \(offset)") }
        guard Array(data[offset..<offset + 4]) == Self.captureSignature else { throw .notOgg(offset) }
        guard data[offset + 4] == 0 else { throw .unsupported("Ogg version \(data[offset + 4])") }
        let flags = data[offset + 5]
        isContinuation = flags & 0x01 != 0
        isBeginningOfStream = flags & 0x02 != 0
        isEndOfStream = flags & 0x04 != 0
        granulePosition = Int64(bitPattern: Self.le(data, offset + 6, 8))
        serialNumber = UInt32(Self.le(data, offset + 14, 4))
        sequenceNumber = UInt32(Self.le(data, offset + 18, 4))
        let storedCRC = UInt32(Self.le(data, offset + 22, 4))
        let segmentCount = Int(data[offset + 26])
        let lacingStart = offset + 27
        guard lacingStart + segmentCount <= data.count else { throw .truncated("lacing table at byte \(offset)") }
        let lacing = data[lacingStart..<lacingStart + segmentCount]
        let bodyStart = lacingStart + segmentCount
        let bodyLength = lacing.reduce(0) { $0 + Int($1) }
        guard bodyStart + bodyLength <= data.count else { throw .truncated("page body at byte \(offset)") }
        byteCount = 27 + segmentCount + bodyLength

        // The CRC covers the whole page with its own CRC field taken as zero.
        var crc = OggCRC()
        crc.update(data[offset..<offset + 22])
        crc.update([0, 0, 0, 0])
        crc.update(data[offset + 26..<offset + byteCount])
        guard crc.value == storedCRC else { throw .badChecksum(offset) }

        var pieces: [(bytes: ArraySlice<UInt8>, ended: Bool)] = []
        var pieceStart = bodyStart
        var cursor = bodyStart
        for value in lacing {
            cursor += Int(value)
            if value < 255 {
                pieces.append((data[pieceStart..<cursor], true))
                pieceStart = cursor
            }
        }
        if lacing.last == 255 { pieces.append((data[pieceStart..<cursor], false)) }
        self.pieces = pieces
    }

    private static func le(_ data: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<count).reversed() { value = value << 8 | UInt64(data[offset + index]) }
        return value
    }
}

/// Ogg's page checksum: CRC-32, polynomial 0x04c11db7, not reflected, initial value and final XOR 0.
struct OggCRC {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? value << 1 ^ 0x04c1_1db7 : value << 1 }
        return value
    }

    private(set) var value: UInt32 = 0

    mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for byte in bytes { value = value << 8 ^ Self.table[Int(value >> 24 ^ UInt32(byte))] }
    }
}
