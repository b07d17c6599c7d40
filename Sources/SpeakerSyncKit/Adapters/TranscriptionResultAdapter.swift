/// A speech recogniser's result as SpeakerSyncKit needs it: SpeechAnalyzer's `SpeechTranscriber.Result`
/// (see `SpeechTranscriberAdapter.swift`, Apple platforms) or any other recogniser's, by conforming.
///
/// SpeechAnalyzer first publishes volatile results for a stretch of audio and later a final one for
/// the same stretch; they share where the stretch starts, which is what makes them one `result_id`
/// here, so the final result replaces the volatile ones on the server.
public protocol TimedTranscriptionResult {
    /// Start of the audio the result covers, seconds on the session's audio.
    var rangeStartSeconds: Double { get }
    var isFinal: Bool { get }
    /// The result's words with their audio times (seconds on the session's audio).
    var timedWords: [SpokenWord] { get }
}

extension SpeakerSyncSession {
    /// Sends a recogniser result; volatile and final results of one stretch share a `result_id`.
    public func send(result: some TimedTranscriptionResult) {
        send(words: result.timedWords, resultID: Self.resultID(rangeStartSeconds: result.rangeStartSeconds), isFinal: result.isFinal)
    }

    /// `r<milliseconds>` of the stretch's start: stable across the volatile and final versions.
    public static func resultID(rangeStartSeconds: Double) -> String {
        "r\(Int64((rangeStartSeconds * 1000).rounded()))"
    }
}

/// A speaker turn from an on-device diarizer: FluidAudio's `TimedSpeakerSegment` has exactly these
/// members (`extension TimedSpeakerSegment: DiarizedSegment {}` in the app, or automatic where the
/// FluidAudio module is present).
public protocol DiarizedSegment {
    var speakerId: String { get }
    var startTimeSeconds: Float { get }
    var endTimeSeconds: Float { get }
}

extension SpeakerSyncSession {
    /// Sends on-device diarization (provider `device`): the device's speaker ids are its keys, and the
    /// server keeps each key on one label across the conversation, reconnects included.
    public func send(diarized segments: [some DiarizedSegment]) {
        send(segments: segments.map {
            SpeakerSyncSegment(speaker: $0.speakerId, startSeconds: Double($0.startTimeSeconds), endSeconds: Double($0.endTimeSeconds))
        })
    }
}

#if canImport(FluidAudio)
import FluidAudio
extension TimedSpeakerSegment: DiarizedSegment {}
#endif
