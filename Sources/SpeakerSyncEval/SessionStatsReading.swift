import DiarizationScoring
import Foundation

/// The server's `stats` message, read on the device side.
public struct ReceivedStats: Sendable {
    public var audioSeconds: Double
    public var wordCount: Int
    public var unlabelledWordCount: Int
    public var speakerCount: Int
    public var firstLabelLatenciesSeconds: [Double]
    public var finalLabelLatenciesSeconds: [Double]
    public var chunkProcessingSeconds: [Double]
    public var realTimeFactor: Double?
    public var liveTurns: [SpeakerSegment]
    public var finalTurns: [SpeakerSegment]

    /// Parses the JSON text of a `stats` message; nil if it is not one.
    public init?(json text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              object["type"] as? String == "stats" else { return nil }
        func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
        func numbers(_ key: String) -> [Double] { (object[key] as? [NSNumber])?.map(\.doubleValue) ?? [] }
        func turns(_ key: String) -> [SpeakerSegment] {
            (object[key] as? [[String: Any]] ?? []).compactMap { item in
                guard let speaker = item["speaker"] as? String, let start = (item["start"] as? NSNumber)?.doubleValue,
                      let end = (item["end"] as? NSNumber)?.doubleValue else { return nil }
                return SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end)
            }
        }
        audioSeconds = number("audio_seconds") ?? 0
        wordCount = (object["words"] as? NSNumber)?.intValue ?? 0
        unlabelledWordCount = (object["unlabelled_words"] as? NSNumber)?.intValue ?? 0
        speakerCount = (object["speakers"] as? NSNumber)?.intValue ?? 0
        firstLabelLatenciesSeconds = numbers("first_label_latency_seconds")
        finalLabelLatenciesSeconds = numbers("final_label_latency_seconds")
        chunkProcessingSeconds = numbers("chunk_processing_seconds")
        realTimeFactor = number("real_time_factor")
        liveTurns = turns("live_turns")
        finalTurns = turns("final_turns")
    }
}
