#if canImport(Speech) && canImport(CoreMedia)
import CoreMedia
import Foundation
import Speech

/// SpeechAnalyzer's transcriber results as SpeakerSyncKit results. Ask the transcriber for time
/// ranges (`attributeOptions: [.audioTimeRange]`): each run of the result's text then carries the
/// audio time range of its word. Not compiled on the Linux machine this package is tested on.
@available(iOS 26, macOS 26, *)
extension SpeechTranscriber.Result: TimedTranscriptionResult {
    public var rangeStartSeconds: Double { range.start.seconds }

    public var timedWords: [SpokenWord] {
        text.runs.compactMap { run -> SpokenWord? in
            guard let timeRange = run.audioTimeRange else { return nil }
            let word = String(text[run.range].characters).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !word.isEmpty else { return nil }
            return SpokenWord(text: word, startSeconds: timeRange.start.seconds, endSeconds: timeRange.end.seconds)
        }
    }
}
#endif
