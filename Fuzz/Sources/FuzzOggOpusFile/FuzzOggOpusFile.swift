// OggOpusFile, the Ogg Opus demuxer (`speakersync stream` reads a file with it; RFC 7845).
//
// Every page's CRC is recomputed before parsing, as fuzzers of PNG readers do: otherwise nearly
// every mutation would stop at the checksum and the page and packet logic behind it would never run.
//
// Properties: a file that parses is mono or stereo family 0; its audio packets together hold no
// more bytes than the file; parsing is deterministic; and a file cut short by one byte never
// parses to more packets than the whole file.
import OpusCodec

/// Ogg's CRC-32 (polynomial 0x04c11db7, not reflected), as in RFC 3533.
let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index) << 24
    for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? value << 1 ^ 0x04c1_1db7 : value << 1 }
    return value
}

/// Rewrites the CRC of every page that can be walked from the start of `bytes`.
func fixChecksums(_ bytes: inout [UInt8]) {
    var offset = 0
    while offset + 27 <= bytes.count, bytes[offset..<offset + 4].elementsEqual("OggS".utf8) {
        let segments = Int(bytes[offset + 26])
        guard offset + 27 + segments <= bytes.count else { return }
        let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
        let end = offset + 27 + segments + body
        guard end <= bytes.count else { return }
        for index in 22..<26 { bytes[offset + index] = 0 }
        var crc: UInt32 = 0
        for byte in bytes[offset..<end] { crc = crc << 8 ^ crcTable[Int(crc >> 24 ^ UInt32(byte))] }
        for index in 0..<4 { bytes[offset + 22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
        offset = end
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    fixChecksums(&bytes)
    guard let file = try? OggOpusFile(bytes: bytes) else { return 0 }
    guard (1...2).contains(file.channelCount) else { fatalError("accepted \(file.channelCount) channels") }
    let packetBytes = file.packets.reduce(0) { $0 + $1.count }
    guard packetBytes <= bytes.count else { fatalError("\(packetBytes) packet bytes from a \(bytes.count)-byte file") }
    guard let again = try? OggOpusFile(bytes: bytes), again.packets == file.packets,
        again.finalGranulePosition == file.finalGranulePosition, again.preSkip == file.preSkip
    else { fatalError("parsing the same file twice differs") }
    if let shorter = try? OggOpusFile(bytes: Array(bytes.dropLast())), shorter.packets.count > file.packets.count {
        fatalError("a truncated file holds more packets (\(shorter.packets.count)) than the whole (\(file.packets.count))")
    }
    return 0
}
