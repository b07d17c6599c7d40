/// NIST Rich Transcription Time Marked files, the exchange format of diarization references and systems:
/// `SPEAKER <file> <channel> <start> <duration> <NA> <NA> <speaker> <NA> <NA>`, times in seconds.
public enum RTTM {
    /// Speaker turns of every `SPEAKER` line, keyed by file id, in file order.
    ///
    /// Other record types (`SPKR-INFO`, `LEXEME`, …), blank lines and `;;` comments are skipped, as the
    /// scoring tools do. Errors name the line and the field.
    public static func parse(_ text: String) throws(ScoringError) -> [String: [SpeakerSegment]] {
        var files: [String: [SpeakerSegment]] = [:]
        for record in try records(text) { files[record.file, default: []].append(record.segment) }
        return files
    }

    /// Every `SPEAKER` line as (file id, turn), in the order of the text; the rules are `parse`'s.
    public static func records(_ text: String) throws(ScoringError) -> [(file: String, segment: SpeakerSegment)] {
        var records: [(file: String, segment: SpeakerSegment)] = []
        for (line, fields) in TextFields.records(text) where fields[0] == "SPEAKER" {
            guard fields.count >= 8 else {
                let names = ["type", "file", "chnl", "tbeg", "tdur", "ortho", "stype", "name"]
                throw ScoringError(
                    .missingField, line: line, field: names[fields.count],
                    "a SPEAKER line needs at least 8 fields (type file chnl tbeg tdur ortho stype name), found \(fields.count)")
            }
            let start = try TextFields.seconds(fields[3], line: line, name: "tbeg")
            let duration = try TextFields.seconds(fields[4], line: line, name: "tdur")
            guard start >= 0 else {
                throw ScoringError(.invalidInterval, line: line, field: "tbeg", "start \(fields[3]) is negative")
            }
            guard duration >= 0 else {
                throw ScoringError(.invalidInterval, line: line, field: "tdur", "duration \(fields[4]) is negative")
            }
            records.append((String(fields[1]), SpeakerSegment(speaker: String(fields[7]), startSeconds: start, endSeconds: start + duration)))
        }
        return records
    }

    /// One `SPEAKER` line per segment, in the given order, with millisecond times as pyannote writes them.
    /// Whitespace in a file id or speaker name becomes `_`, since fields are whitespace-separated.
    public static func render(_ segments: [SpeakerSegment], fileID: String) -> String {
        let file = TextFields.token(fileID)
        var text = ""
        for segment in segments {
            let start = TextFields.milliseconds(segment.startSeconds)
            let duration = Swift.max(0, TextFields.milliseconds(segment.endSeconds) - start)
            text += "SPEAKER \(file) 1 \(TextFields.format(milliseconds: start)) \(TextFields.format(milliseconds: duration)) "
                + "<NA> <NA> \(TextFields.token(segment.speaker)) <NA> <NA>\n"
        }
        return text
    }
}
