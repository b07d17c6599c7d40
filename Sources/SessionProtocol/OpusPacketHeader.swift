/// What an Opus packet's framing says (RFC 6716 §3.1-3.2), read in Swift without libopus: its
/// configuration, how many frames it holds and so how many samples it decodes to. Parsing also
/// checks the packet against the framing rules R1-R7 (§3.4), so a packet that passes is one libopus
/// will accept as far as framing goes and the session timeline can count its samples exactly.
public struct OpusPacketHeader: Hashable, Sendable {
    /// The rates libopus decodes at; a start with `encoding: "opus"` must use one of them.
    public static let decodeRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]
    /// The longest audio one packet may hold: 120 ms (R5), in 48 kHz samples.
    public static let maxSamplesAt48k = 5_760
    /// The longest compressed frame: 1275 bytes (R2).
    public static let maxFrameBytes = 1_275

    /// The TOC byte's configuration number, 0-31 (Table 2: mode, bandwidth, frame duration).
    public let configuration: Int
    public let isStereo: Bool
    /// Frames in the packet (1 for code 0, 2 for codes 1 and 2, 1-48 for code 3).
    public let frameCount: Int
    /// Each frame's duration in 48 kHz samples (120 = 2.5 ms … 2880 = 60 ms).
    public let samplesPerFrameAt48k: Int

    /// The packet's audio in 48 kHz samples.
    public var samplesAt48k: Int { frameCount * samplesPerFrameAt48k }

    /// The samples the packet decodes to at `sampleRate` (one of `decodeRates`; every Opus frame
    /// duration is a whole number of samples at each of them).
    public func sampleCount(atRate sampleRate: Int) -> Int {
        samplesAt48k * sampleRate / 48_000
    }

    /// The frame duration of each configuration (Table 2), in 48 kHz samples: SILK 10/20/40/60 ms
    /// for 0-11, hybrid 10/20 ms for 12-15, CELT 2.5/5/10/20 ms for 16-31.
    static func samplesPerFrame(configuration: Int) -> Int {
        switch configuration {
        case 0...11: [480, 960, 1_920, 2_880][configuration % 4]
        case 12...15: [480, 960][configuration % 2]
        default: [120, 240, 480, 960][configuration % 4]
        }
    }

    public init(packet: [UInt8]) throws(OpusPacketError) {
        guard let toc = packet.first else { throw .empty }
        configuration = Int(toc >> 3)
        isStereo = toc & 0x04 != 0
        samplesPerFrameAt48k = Self.samplesPerFrame(configuration: configuration)
        let payload = packet.count - 1
        switch toc & 0x03 {
        case 0:
            frameCount = 1
            guard payload <= Self.maxFrameBytes else { throw .frameTooLong(payload) }
        case 1:
            frameCount = 2
            guard payload % 2 == 0 else { throw .oddLengthForEqualFrames(payload) }
            guard payload / 2 <= Self.maxFrameBytes else { throw .frameTooLong(payload / 2) }
        case 2:
            frameCount = 2
            let (first, used) = try Self.frameLength(packet, at: 1)
            let second = payload - used - first
            guard second >= 0 else { throw .lengthsExceedPacket }
            guard first <= Self.maxFrameBytes, second <= Self.maxFrameBytes else { throw .frameTooLong(max(first, second)) }
        default:
            guard packet.count >= 2 else { throw .truncated }
            let countByte = packet[1]
            frameCount = Int(countByte & 0x3f)
            guard frameCount >= 1 else { throw .zeroFrameCount }
            guard frameCount * samplesPerFrameAt48k <= Self.maxSamplesAt48k else {
                throw .tooLong(milliseconds: Double(frameCount * samplesPerFrameAt48k) / 48)
            }
            try Self.checkCode3(packet, frameCount: frameCount, isVBR: countByte & 0x80 != 0, hasPadding: countByte & 0x40 != 0)
        }
    }

    /// A frame length coded in one byte (0-251) or two (252-255, then a multiplier of 4).
    private static func frameLength(_ packet: [UInt8], at index: Int) throws(OpusPacketError) -> (length: Int, bytes: Int) {
        guard index < packet.count else { throw .truncated }
        let first = Int(packet[index])
        guard first >= 252 else { return (first, 1) }
        guard index + 1 < packet.count else { throw .truncated }
        return (Int(packet[index + 1]) * 4 + first, 2)
    }

    /// Code 3 (§3.2.5): optional padding, then either M-1 coded lengths (VBR) or equal frames (CBR).
    private static func checkCode3(_ packet: [UInt8], frameCount: Int, isVBR: Bool, hasPadding: Bool) throws(OpusPacketError) {
        var index = 2
        var padding = 0
        if hasPadding {
            // Each 255 adds 254 bytes and continues; the first other value adds itself and ends.
            while true {
                guard index < packet.count else { throw .truncated }
                let value = Int(packet[index])
                index += 1
                padding += value == 255 ? 254 : value
                if value != 255 { break }
            }
        }
        var remaining = packet.count - index - padding
        guard remaining >= 0 else { throw .lengthsExceedPacket }
        if isVBR {
            for _ in 0..<(frameCount - 1) {
                let (length, used) = try frameLength(packet, at: index)
                index += used
                remaining -= used + length
                guard length <= maxFrameBytes else { throw .frameTooLong(length) }
                guard remaining >= 0 else { throw .lengthsExceedPacket }
            }
            guard remaining <= maxFrameBytes else { throw .frameTooLong(remaining) }
        } else {
            guard remaining % frameCount == 0 else { throw .unequalFrames(remaining, frameCount) }
            guard remaining / frameCount <= maxFrameBytes else { throw .frameTooLong(remaining / frameCount) }
        }
    }
}

/// Why a binary message is not a valid Opus packet.
public enum OpusPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case truncated
    case zeroFrameCount
    case tooLong(milliseconds: Double)
    case frameTooLong(Int)
    case oddLengthForEqualFrames(Int)
    case unequalFrames(Int, Int)
    case lengthsExceedPacket

    public var description: String {
        switch self {
        case .empty: "an empty message is not an Opus packet"
        case .truncated: "the packet ends inside its frame count or lengths"
        case .zeroFrameCount: "a code 3 packet must hold 1-48 frames, not 0"
        case .tooLong(let ms): "the packet holds \(ms) ms of audio; Opus allows at most 120 ms"
        case .frameTooLong(let bytes): "a frame of \(bytes) bytes exceeds Opus's 1275"
        case .oddLengthForEqualFrames(let bytes): "a code 1 packet's \(bytes) payload bytes cannot make two equal frames"
        case .unequalFrames(let bytes, let count): "a constant-bitrate code 3 packet's \(bytes) bytes do not divide into \(count) frames"
        case .lengthsExceedPacket: "the packet's frame lengths or padding exceed its size"
        }
    }
}
