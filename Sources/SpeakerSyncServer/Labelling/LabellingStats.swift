import Foundation
import Statistics

/// A labelling's figures as stored with it (`labellings.stats`) and reported by compare: what one
/// provider did with one session's audio.
struct LabellingStats {
    var audioSeconds: Double
    var wordCount: Int
    var unlabelledWordCount: Int
    var speakerCount: Int
    var cpuSeconds: Double
    var chunkSeconds: [Double]
    /// Per word: seconds from having the word and its audio to its first speaker.
    var labelLatenciesSeconds: [Double]

    /// Provider CPU seconds per audio second; nil without audio or processed chunks.
    var realTimeFactor: Double? { audioSeconds > 0 && !chunkSeconds.isEmpty ? cpuSeconds / audioSeconds : nil }

    var json: String {
        func summary(_ values: [Double]) -> [String: Any] {
            let percentiles = Percentiles(values)
            var object: [String: Any] = ["count": percentiles.count]
            for (key, value) in [("p50", percentiles.p50), ("p95", percentiles.p95), ("p99", percentiles.p99), ("max", percentiles.max)] {
                if let value { object[key] = value }
            }
            return object
        }
        var object: [String: Any] = [
            "audio_seconds": audioSeconds, "words": wordCount, "unlabelled_words": unlabelledWordCount,
            "speakers": speakerCount, "chunk_seconds": summary(chunkSeconds),
            "label_latency_seconds": summary(labelLatenciesSeconds),
        ]
        if let realTimeFactor { object["real_time_factor"] = realTimeFactor }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
