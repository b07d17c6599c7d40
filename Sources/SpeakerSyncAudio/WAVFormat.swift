/// How the samples of a WAV file are stored, as read from its `fmt ` chunk.
public struct WAVFormat: Sendable, Equatable {
    public enum Encoding: String, Sendable, Equatable {
        /// Linear PCM integers (8-bit unsigned, 16/24/32-bit signed little-endian).
        case pcmInteger = "pcm"
        /// IEEE-754 floats (32 or 64 bit), little-endian.
        case ieeeFloat = "float"
    }

    public var encoding: Encoding
    public var channelCount: Int
    public var sampleRate: Int
    public var bitsPerSample: Int
    /// Bytes per frame (all channels of one sample instant), from `nBlockAlign`.
    public var blockAlign: Int
    /// Whether the header used WAVE_FORMAT_EXTENSIBLE (0xFFFE) with a sub-format GUID.
    public var isExtensible: Bool

    public init(encoding: Encoding, channelCount: Int, sampleRate: Int, bitsPerSample: Int,
                blockAlign: Int, isExtensible: Bool = false) {
        self.encoding = encoding
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.bitsPerSample = bitsPerSample
        self.blockAlign = blockAlign
        self.isExtensible = isExtensible
    }
}

/// Format tags and GUID fragments from the RIFF/WAVE specification (mmreg.h).
enum WAVFormatTag {
    static let pcm: UInt16 = 0x0001
    static let ieeeFloat: UInt16 = 0x0003
    static let extensible: UInt16 = 0xFFFE
}
