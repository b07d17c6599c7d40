/// A word from the device's speech recogniser: the protocol's (and the merge's) `Word` — text,
/// `startSeconds`, `endSeconds`, `confidence` (0…1, when the recogniser gives one). Times are seconds
/// from the first sample this session was given (SpeechAnalyzer reports times on the audio it was fed,
/// which is the same audio); the session adds where that sample lies on the conversation's timeline.
public typealias SpokenWord = Word

/// A speaker turn the device computed itself (provider `device`, e.g. FluidAudio on the phone): the
/// protocol's `DeviceSegment` (`speaker`, the device's own key for the voice; `startSeconds`,
/// `endSeconds` as for `SpokenWord`; an optional `confidence`).
public typealias SpeakerSyncSegment = DeviceSegment

/// How the session's audio travels (the start's `encoding`): the protocol's `AudioEncoding` —
/// `.pcmS16LE` (half the bytes of float, no audible loss), `.pcmF32LE`, or `.opus`: one raw Opus packet
/// per message (mono; 8, 12, 16, 24 or 48 kHz), as wearables send; give each packet with
/// `send(pcm:sampleCount:)` (the app or the device encodes; the kit needs no libopus).
public typealias AudioFormat = AudioEncoding
