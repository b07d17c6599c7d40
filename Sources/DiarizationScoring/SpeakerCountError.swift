/// How far the number of speakers found is from the number in the reference.
public struct SpeakerCountError: Sendable, Hashable {
    public var referenceCount: Int
    public var hypothesisCount: Int
    /// hypothesis − reference: positive when the system splits speakers, negative when it merges them
    /// (pyannote's `DiarizationSpeakerCountError` reports its absolute value).
    public var difference: Int { hypothesisCount - referenceCount }

    public init(referenceCount: Int, hypothesisCount: Int) {
        self.referenceCount = referenceCount
        self.hypothesisCount = hypothesisCount
    }

    /// Counts the speakers with speech inside the UEM (anywhere when nil), as pyannote does.
    public init(reference: [SpeakerSegment], hypothesis: [SpeakerSegment], uem: [TimeSpan]? = nil) {
        let region = uem.map { IntervalSet(union: $0) }
        referenceCount = Self.speakers(in: reference, region: region)
        hypothesisCount = Self.speakers(in: hypothesis, region: region)
    }

    private static func speakers(in segments: [SpeakerSegment], region: IntervalSet?) -> Int {
        var speakers = Set<String>()
        for segment in segments where !speakers.contains(segment.speaker) {
            guard let span = ScoredRegion.span(segment) else { continue }
            let inside = region.map { region in
                region.spans.contains {
                    Swift.min($0.endSeconds, span.endSeconds) - Swift.max($0.startSeconds, span.startSeconds) > segmentPrecisionSeconds
                }
            } ?? true
            if inside { speakers.insert(segment.speaker) }
        }
        return speakers.count
    }
}
