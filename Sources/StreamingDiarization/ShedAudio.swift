import SpeakerSyncAudio

/// The windows of frames shed under load (`StreamingDiarizer.embeddingStride`), kept for finalize to
/// embed, as the union of their audio in 16-bit: one frame's window is 1.5 s at a 0.5 s hop, so
/// consecutive frames' windows share up to two thirds of their samples, and keeping each window by
/// itself held the same audio up to three times (120 s of allowance then covered about 40 s of shed
/// speech; a 60 s synthetic meeting shed at stride 4 lost frames and finalize miscounted it).
/// `capacitySamples` bounds the distinct samples kept. One session's queue; not thread-safe.
struct ShedAudio {
    struct Frame {
        var region: Int
        var frame: Int
        var startSample: Int
        var endSample: Int
    }

    let capacitySamples: Int
    private(set) var frames: [Frame] = []
    /// Kept audio, sorted by start: runs of adjacent or overlapping windows joined into one span (a
    /// window out of order is a span of its own, its samples counted even where a neighbour holds them).
    private var spans: [(startSample: Int, samples: [Int16])] = []
    /// Distinct samples kept.
    private(set) var sampleCount = 0

    init(capacitySamples: Int) {
        self.capacitySamples = max(0, capacitySamples)
    }

    /// Keeps `window`, the session's samples from `startSample`, for `frame` of `region`; false (nothing
    /// kept) when its samples not kept already would exceed the allowance.
    @discardableResult
    mutating func retain(region: Int, frame: Int, startSample: Int, window: [Float]) -> Bool {
        let endSample = startSample + window.count
        // Windows come in time order, so the new samples are those past the last span, if it reaches
        // this window; a window out of order (or far from the last) becomes a span of its own.
        if let last = spans.last, startSample >= last.startSample, startSample <= last.startSample + last.samples.count {
            let lastEnd = last.startSample + last.samples.count
            let added = max(0, endSample - lastEnd)
            guard sampleCount + added <= capacitySamples else { return false }
            if added > 0 { spans[spans.count - 1].samples += window[(lastEnd - startSample)...].map(PCMDecoding.quantizeS16) }
            sampleCount += added
        } else if covered(startSample, endSample) {
            // Already held (a window inside an earlier span).
        } else {
            guard sampleCount + window.count <= capacitySamples else { return false }
            let index = spans.firstIndex { $0.startSample > startSample } ?? spans.count
            spans.insert((startSample, window.map(PCMDecoding.quantizeS16)), at: index)
            sampleCount += window.count
        }
        frames.append(Frame(region: region, frame: frame, startSample: startSample, endSample: endSample))
        return true
    }

    /// A kept frame's window, as it was given (to 16-bit precision).
    func window(of frame: Frame) -> [Float] {
        for span in spans where span.startSample <= frame.startSample && frame.endSample <= span.startSample + span.samples.count {
            return span.samples[(frame.startSample - span.startSample) ..< (frame.endSample - span.startSample)].map { Float($0) / 32_768 }
        }
        preconditionFailure("a kept frame's window lies in one span")
    }

    mutating func removeAll() {
        frames.removeAll()
        spans.removeAll()
        sampleCount = 0
    }

    private func covered(_ start: Int, _ end: Int) -> Bool {
        spans.contains { $0.startSample <= start && end <= $0.startSample + $0.samples.count }
    }
}
