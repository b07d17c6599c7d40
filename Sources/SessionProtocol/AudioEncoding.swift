/// Format of the binary audio frames (always mono).
public enum AudioEncoding: String, CaseIterable, Hashable, Sendable {
    /// Signed 16-bit integer PCM, little-endian; decoded as value / 32768.
    case pcmS16LE = "pcm_s16le"
    /// 32-bit IEEE float PCM, little-endian, nominal range -1…1.
    case pcmF32LE = "pcm_f32le"
    /// One raw Opus packet (RFC 6716) per binary message, as wearables send; decoded by the server.
    case opus

    /// Bytes per sample of a PCM encoding; nil for Opus, whose packets have no fixed sample width.
    public var bytesPerSample: Int? {
        switch self {
        case .pcmS16LE: 2
        case .pcmF32LE: 4
        case .opus: nil
        }
    }

    /// The sample rates a start may use with this encoding, when narrower than the server's range:
    /// Opus decodes only at these rates (decoding at the session's own rate avoids a resampler).
    public var allowedSampleRates: Set<Int>? {
        self == .opus ? OpusPacketHeader.decodeRates : nil
    }
}
