/// How detected speech lines up with reference speech (e.g. the turns of an RTTM file): overlapping
/// intervals on either side are merged first, so overlapped talkers count once.
public struct SpeechCoverage: Sendable, Hashable {
    public var referenceSeconds: Double
    public var detectedSeconds: Double
    /// Reference speech that is also detected.
    public var coveredSeconds: Double

    public init(referenceSeconds: Double = 0, detectedSeconds: Double = 0, coveredSeconds: Double = 0) {
        self.referenceSeconds = referenceSeconds
        self.detectedSeconds = detectedSeconds
        self.coveredSeconds = coveredSeconds
    }

    public init(reference: [SpeechSegment], detected: [SpeechSegment]) {
        let reference = Self.union(reference)
        let detected = Self.union(detected)
        var covered = 0.0
        var next = 0
        for span in reference {
            while next < detected.count, detected[next].endSeconds <= span.startSeconds { next += 1 }
            var index = next
            while index < detected.count, detected[index].startSeconds < span.endSeconds {
                covered += min(span.endSeconds, detected[index].endSeconds) - max(span.startSeconds, detected[index].startSeconds)
                index += 1
            }
        }
        self.init(
            referenceSeconds: reference.reduce(0) { $0 + $1.durationSeconds },
            detectedSeconds: detected.reduce(0) { $0 + $1.durationSeconds }, coveredSeconds: covered)
    }

    /// Fraction of the reference speech detected (1 when there is no reference speech).
    public var coverage: Double { referenceSeconds > 0 ? coveredSeconds / referenceSeconds : 1 }
    /// Detected time outside the reference speech.
    public var falseAlarmSeconds: Double { detectedSeconds - coveredSeconds }
    /// Reference speech not detected.
    public var missedSeconds: Double { referenceSeconds - coveredSeconds }

    /// Totals over several recordings.
    public static func + (lhs: SpeechCoverage, rhs: SpeechCoverage) -> SpeechCoverage {
        SpeechCoverage(
            referenceSeconds: lhs.referenceSeconds + rhs.referenceSeconds,
            detectedSeconds: lhs.detectedSeconds + rhs.detectedSeconds,
            coveredSeconds: lhs.coveredSeconds + rhs.coveredSeconds)
    }

    /// Sorted, non-overlapping, empty spans dropped.
    static func union(_ segments: [SpeechSegment]) -> [SpeechSegment] {
        var merged: [SpeechSegment] = []
        for segment in segments.sorted(by: { $0.startSeconds < $1.startSeconds }) where segment.endSeconds > segment.startSeconds {
            if let last = merged.last, segment.startSeconds <= last.endSeconds {
                merged[merged.count - 1].endSeconds = max(last.endSeconds, segment.endSeconds)
            } else {
                merged.append(segment)
            }
        }
        return merged
    }
}
