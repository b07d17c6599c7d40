/// Sample format of the binary audio frames (always mono, little-endian).
public enum AudioEncoding: String, CaseIterable, Hashable, Sendable {
    /// Signed 16-bit integer PCM; decoded as value / 32768.
    case pcmS16LE = "pcm_s16le"
    /// 32-bit IEEE float PCM, nominal range -1…1.
    case pcmF32LE = "pcm_f32le"

    public var bytesPerSample: Int {
        switch self {
        case .pcmS16LE: 2
        case .pcmF32LE: 4
        }
    }
}
