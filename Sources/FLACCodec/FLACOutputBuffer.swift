/// Where the encoder's write callback puts the stream: the bytes of one FLAC file, in memory.
///
/// A class of its own, not the encoder, is what libFLAC holds (as client_data), so that libFLAC
/// writing from inside `FLAC__stream_encoder_delete` could never reach an encoder being deinitialised.
final class FLACOutputBuffer {
    /// "fLaC", then STREAMINFO's 4-byte block header: where its body starts.
    private static let streamInfoOffset = 8

    private(set) var bytes: [UInt8] = []

    func append(_ chunk: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: chunk)
    }

    /// Replaces the STREAMINFO written at the start with libFLAC's final one (frame sizes, sample count
    /// and MD5, known only at the end). This is what libFLAC's seek callback is for, done in memory.
    /// A stream not laid out as libFLAC writes it is left alone: its first STREAMINFO is still valid,
    /// only less complete.
    func rewriteStreamInfo(_ info: FLACStreamInfo) {
        let offset = Self.streamInfoOffset, count = FLACStreamInfo.encodedByteCount
        guard bytes.count >= offset + count,
              bytes[0..<4].elementsEqual("fLaC".utf8),
              bytes[4] & 0x7F == 0, // block type 0, STREAMINFO (the top bit only marks the last block)
              bytes[5] == 0, bytes[6] == 0, Int(bytes[7]) == count // its 24-bit length
        else { return }
        bytes.replaceSubrange(offset..<offset + count, with: info.encoded)
    }

    /// Hands the stream over, leaving the buffer empty (no copy of a long recording is kept).
    func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}
