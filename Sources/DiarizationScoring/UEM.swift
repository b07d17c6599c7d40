/// Un-partitioned evaluation maps: the regions of each file that are scored,
/// `<file> <channel> <start> <end>` per line, times in seconds.
public enum UEM {
    /// Scored regions keyed by file id, in file order. Blank lines and `;;` comments are skipped.
    public static func parse(_ text: String) throws(ScoringError) -> [String: [TimeSpan]] {
        var files: [String: [TimeSpan]] = [:]
        for (line, fields) in TextFields.records(text) {
            guard fields.count >= 4 else {
                let names = ["file", "chnl", "tbeg", "tend"]
                throw ScoringError(
                    .missingField, line: line, field: names[fields.count],
                    "a UEM line needs 4 fields (file chnl tbeg tend), found \(fields.count)")
            }
            let start = try TextFields.seconds(fields[2], line: line, name: "tbeg")
            let end = try TextFields.seconds(fields[3], line: line, name: "tend")
            guard start >= 0 else {
                throw ScoringError(.invalidInterval, line: line, field: "tbeg", "start \(fields[2]) is negative")
            }
            guard end >= start else {
                throw ScoringError(.invalidInterval, line: line, field: "tend", "end \(fields[3]) is before start \(fields[2])")
            }
            files[String(fields[0]), default: []].append(TimeSpan(startSeconds: start, endSeconds: end))
        }
        return files
    }

    /// One line per span, channel 1, millisecond times as pyannote writes them.
    public static func render(_ spans: [TimeSpan], fileID: String) -> String {
        let file = TextFields.token(fileID)
        var text = ""
        for span in spans {
            let start = TextFields.milliseconds(span.startSeconds)
            let end = Swift.max(start, TextFields.milliseconds(span.endSeconds))
            text += "\(file) 1 \(TextFields.format(milliseconds: start)) \(TextFields.format(milliseconds: end))\n"
        }
        return text
    }
}
