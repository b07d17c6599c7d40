/// The line splitting and number reading that RTTM and UEM share.
enum TextFields {
    /// Non-blank, non-comment lines with their 1-based numbers, split on spaces and tabs.
    /// (`\r\n` is one Character in Swift, hence `isNewline` rather than splitting on `"\n"`; a line
    /// break never joins the Character after it.) Fields split on the space and tab *scalars*: a space
    /// followed by a combining mark is one Character that is not `" "`, so splitting Characters read
    /// `<NA> \u{303}` as one field (found by Fuzz/FuzzRTTM).
    static func records(_ text: String) -> [(lineNumber: Int, fields: [Substring])] {
        var records: [(Int, [Substring])] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let fields = rawLine.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Substring($0) }
            guard let first = fields.first, !first.hasPrefix(";;"), !first.hasPrefix("#") else { continue }
            records.append((index + 1, fields))
        }
        return records
    }

    /// The longest time a field may hold: 10^9 s, about 31.7 years, far beyond any recording. Bounded
    /// so that whatever `parse` reads, `render` can write back: a time such as `1e20` (found by
    /// Fuzz/FuzzRTTM) used to trap in `milliseconds`, and below this bound a start plus a duration
    /// is still a whole number of milliseconds that a Double holds exactly.
    static let maxSeconds: Double = 1e9

    static func seconds(_ field: Substring, line: Int, name: String) throws(ScoringError) -> Double {
        guard let value = Double(field), value.isFinite else {
            throw ScoringError(.invalidNumber, line: line, field: name, "'\(field)' is not a finite number of seconds")
        }
        // The magnitude, so that a negative time is still refused as the negative interval it is.
        guard value.magnitude <= maxSeconds else {
            throw ScoringError(.invalidNumber, line: line, field: name, "'\(field)' seconds is beyond 10^9 s (31 years)")
        }
        return value
    }

    /// Milliseconds, as the reference tools write them; whole milliseconds so that start + duration
    /// written separately still add up to the rounded end.
    static func milliseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 0 }
        // Clamped to ±2^53 ms: `render` also takes segments that did not come from `parse`, and no
        // Double may trap the conversion; two clamped values still subtract without overflow.
        let limit = 9_007_199_254_740_992.0
        return Int64(Swift.min(limit, Swift.max(-limit, (seconds * 1000).rounded())))
    }

    static func format(milliseconds: Int64) -> String {
        let sign = milliseconds < 0 ? "-" : ""
        let magnitude = milliseconds.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Fields are separated by whitespace, so whitespace inside a name becomes `_` (scalar by
    /// scalar, as `records` splits).
    static func token(_ name: String) -> String {
        var cleaned = String.UnicodeScalarView()
        for scalar in name.unicodeScalars { cleaned.append(scalar.properties.isWhitespace ? "_" : scalar) }
        return cleaned.isEmpty ? "_" : String(cleaned)
    }
}
