import DiarizationScoring
import SpeakerSyncAudio
import SpeakerSyncClient

/// One recording to evaluate: its audio, the words a device would send for it, and the truth.
public struct EvalRecording: Sendable {
    /// The file id: the audio file's name without extension, as used in RTTM and UEM.
    public var id: String
    public var audio: AudioBuffer
    /// What the device sends as ASR words.
    public var words: [DeviceWord]
    /// Reference speaker turns.
    public var reference: [SpeakerSegment]
    /// Scored region; nil scores the whole extent of reference and hypothesis, as pyannote does.
    public var uem: [TimeSpan]?
    /// The device's words with their true speakers: exact for synthetic meetings (the words file
    /// carries speakers), otherwise the reference turn covering the word's midpoint.
    public var referenceWords: [ScoredWord]
    /// Device diarization for provider `device`: the reference turns unless the caller supplies others.
    public var deviceSegments: [DeviceSegment]
    /// The conversation id the session asks for (nil: the server makes one). Chosen up front, it lets
    /// a page follow the live session while it streams.
    public var conversationID: String? = nil

    public var audioSeconds: Double { Double(audio.samples.count) / Double(audio.sampleRate) }

    public var referenceSpeakerCount: Int { Set(reference.map(\.speaker)).count }
}
