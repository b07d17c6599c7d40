/// A word from the device's speech recogniser. Times are seconds from the first sample this session
/// was given (SpeechAnalyzer reports times on the audio it was fed, which is the same audio).
public struct SpokenWord: Sendable, Equatable, Hashable {
    public var text: String
    public var startSeconds: Double
    public var endSeconds: Double
    /// The recogniser's confidence (0…1), when it gives one.
    public var confidence: Double?

    public init(text: String, startSeconds: Double, endSeconds: Double, confidence: Double? = nil) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.confidence = confidence
    }
}

/// A speaker turn the device computed itself (provider `device`, e.g. FluidAudio on the phone). Times
/// as for `SpokenWord`; `speaker` is the device's own key for the voice.
public struct SpeakerSyncSegment: Sendable, Equatable, Hashable {
    public var speaker: String
    public var startSeconds: Double
    public var endSeconds: Double

    public init(speaker: String, startSeconds: Double, endSeconds: Double) {
        self.speaker = speaker
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}

/// How the session's audio travels (the start's `encoding`).
public enum AudioFormat: String, Sendable, CaseIterable {
    /// Signed 16-bit little-endian PCM, mono: half the bytes of float, no audible loss.
    case pcmS16LE = "pcm_s16le"
    /// 32-bit float little-endian PCM, mono.
    case pcmF32LE = "pcm_f32le"
    /// One raw Opus packet per message (mono; 8, 12, 16, 24 or 48 kHz), as wearables send: give each
    /// packet with `send(pcm:sampleCount:)` (the app or the device encodes; the kit needs no libopus).
    case opus

    /// nil for Opus: packets are kept and resent whole.
    var bytesPerSample: Int? {
        switch self {
        case .pcmS16LE: 2
        case .pcmF32LE: 4
        case .opus: nil
        }
    }
}
