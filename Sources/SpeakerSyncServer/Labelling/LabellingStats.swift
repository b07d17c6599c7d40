import SessionProtocol
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

    /// The stored document, keys in sorted order. Written with `JSONTextWriter`, not
    /// `JSONSerialization` (whose sorted-key writing was 5 % of the server's time when 500 sessions
    /// end within a second).
    var json: String {
        func summary(_ values: [Double], into writer: inout JSONTextWriter) {
            let percentiles = Percentiles(values)
            writer.beginObject()
            writer.key("count"); writer.integer(percentiles.count)
            for (key, value) in [("max", percentiles.max), ("p50", percentiles.p50), ("p95", percentiles.p95), ("p99", percentiles.p99)] {
                if let value { writer.key(key); writer.number(value) }
            }
            writer.endObject()
        }
        var writer = JSONTextWriter()
        writer.beginObject()
        writer.key("audio_seconds"); writer.number(audioSeconds)
        writer.key("chunk_seconds"); summary(chunkSeconds, into: &writer)
        writer.key("label_latency_seconds"); summary(labelLatenciesSeconds, into: &writer)
        if let realTimeFactor { writer.key("real_time_factor"); writer.number(realTimeFactor) }
        writer.key("speakers"); writer.integer(speakerCount)
        writer.key("unlabelled_words"); writer.integer(unlabelledWordCount)
        writer.key("words"); writer.integer(wordCount)
        writer.endObject()
        return writer.text
    }
}
