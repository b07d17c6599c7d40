/// An Ogg Opus file (RFC 7845) taken apart into its raw Opus packets, without decoding anything.
///
/// Only the first logical stream is read (chained or multiplexed streams are not). Its first packet
/// must be OpusHead; the second (OpusTags) is skipped; every later packet is audio. The packets
/// decode on a 48 kHz timeline whatever rate the source had (`inputSampleRate` is informational).
public struct OggOpusFile: Sendable {
    /// Ogg Opus granule positions and pre-skip always count 48 kHz samples (RFC 7845 §4).
    public static let timelineRate = 48_000

    public var channelCount: Int
    /// Samples (at 48 kHz) at the start of the decoded stream that are encoder priming, not audio:
    /// a player discards them (RFC 7845 §4.2).
    public var preSkip: Int
    /// The rate of the audio before encoding, in Hz (0 when unspecified).
    public var inputSampleRate: Int
    /// Gain to apply on output, in dB (Q7.8 in the file).
    public var outputGainDecibels: Double
    /// The audio packets in order, one raw Opus packet each.
    public var packets: [[UInt8]]
    /// The granule position of the last page: pre-skip plus the samples the stream really holds, so
    /// the decoder's output beyond it is end padding (nil when no page carried one).
    public var finalGranulePosition: Int64?

    public init(bytes data: [UInt8]) throws(OggOpusError) {
        var offset = 0
        var serial: UInt32?
        var packets: [[UInt8]] = []
        var partial: [UInt8]?
        var finalGranule: Int64?
        while offset < data.count {
            let page = try OggPage(data, at: offset)
            offset += page.byteCount
            if serial == nil {
                guard page.isBeginningOfStream else { throw .notOpus("the first page does not begin a stream") }
                serial = page.serialNumber
            }
            guard page.serialNumber == serial else { continue }
            for (index, piece) in page.pieces.enumerated() {
                if index == 0, page.isContinuation {
                    // A continued piece belongs to the packet the previous page left open; without one
                    // (a lost page) it is the tail of a packet we never saw and is dropped.
                    guard partial != nil else { continue }
                    partial! += piece.bytes
                } else {
                    partial = Array(piece.bytes)
                }
                if piece.ended {
                    packets.append(partial!)
                    partial = nil
                }
            }
            if page.granulePosition >= 0 { finalGranule = page.granulePosition }
            if page.isEndOfStream { break }
        }

        guard let head = packets.first else { throw .notOpus("no packets") }
        guard head.count >= 19, Array(head[0..<8]) == Array("OpusHead".utf8) else {
            throw .notOpus("the first packet is not OpusHead")
        }
        guard head[8] >> 4 == 0 else { throw .unsupported("OpusHead version \(head[8])") }
        channelCount = Int(head[9])
        preSkip = Int(UInt16(head[10]) | UInt16(head[11]) << 8)
        inputSampleRate = Int(UInt32(head[12]) | UInt32(head[13]) << 8 | UInt32(head[14]) << 16 | UInt32(head[15]) << 24)
        outputGainDecibels = Double(Int16(bitPattern: UInt16(head[16]) | UInt16(head[17]) << 8)) / 256
        // Family 0 is one Opus stream of 1 or 2 channels (a mono decoder mixes stereo down); other
        // families carry several streams per packet, which a raw-packet protocol cannot pass on.
        guard head[18] == 0, (1...2).contains(channelCount) else {
            throw .unsupported("channel mapping family \(head[18]) with \(channelCount) channels (only mono or stereo family 0)")
        }
        guard packets.count >= 2, Array(packets[1].prefix(8)) == Array("OpusTags".utf8) else {
            throw .notOpus("the second packet is not OpusTags")
        }
        self.packets = Array(packets.dropFirst(2))
        finalGranulePosition = finalGranule
    }
}
