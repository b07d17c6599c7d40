/// A segmentation model that hears several local speakers at once (pyannote segmentation-3.0 behind
/// DiarizationModels' `PyannoteSegmenter`; scripted ones in tests).
public protocol LocalActivitySegmenter {
    var sampleRate: Int { get }
    /// The window the model takes (10 s for segmentation-3.0).
    var windowSamples: Int { get }
    var frameStepSeconds: Double { get }
    /// Frame `frame`'s centre, in seconds from the window's start.
    func centreSeconds(frame: Int) -> Double
    /// Each frame's talking local speakers as a bit mask, for exactly `windowSamples` samples.
    func activeMasks(_ window: [Float]) throws -> [UInt8]
}

/// Follows a session's audio for `OverlapTurns`: segments it window by window as it arrives (so
/// finalize pays for one window at most) and keeps only the frames' masks, about 60 bytes per second.
/// Windows follow each other every `stepSeconds`; where they overlap, each frame is kept from the window
/// in which it lies nearest the centre (window edges are where the model knows least). The last
/// window is padded with silence, as pyannote pads its last chunk. One session's queue; not thread-safe.
public final class OverlapTracker {
    public let segmenter: any LocalActivitySegmenter
    public let stepSamples: Int
    public private(set) var windows: [LocalActivityWindow] = []
    /// Audio from `bufferStart` (in samples from the session's start) not yet fully segmented.
    private var buffer: [Float] = []
    private var bufferStart = 0
    private var isFinished = false

    /// `stepSeconds` defaults to the window's length: every sample segmented once (the cheapest shape;
    /// docs/speakerkit.md has what a 5 s step changed on the calibration sets).
    public init(segmenter: any LocalActivitySegmenter, stepSeconds: Double? = nil) {
        self.segmenter = segmenter
        let step = stepSeconds.map { Int($0 * Double(segmenter.sampleRate)) } ?? segmenter.windowSamples
        stepSamples = min(segmenter.windowSamples, max(1, step))
    }

    private var marginSeconds: Double { Double(segmenter.windowSamples - stepSamples) / 2 / Double(segmenter.sampleRate) }

    public func push(_ samples: [Float]) throws {
        guard !isFinished else { return }
        buffer += samples
        while buffer.count >= segmenter.windowSamples {
            try segment(Array(buffer.prefix(segmenter.windowSamples)), realSamples: segmenter.windowSamples, isLast: false)
            buffer.removeFirst(stepSamples)
            bufferStart += stepSamples
        }
    }

    /// Segments what is left (the session ended); later pushes are ignored.
    public func finish() throws {
        guard !isFinished else { return }
        isFinished = true
        // Empty when the audio ended exactly at a window's end and windows do not overlap.
        guard !buffer.isEmpty else { return }
        let padded = buffer + [Float](repeating: 0, count: segmenter.windowSamples - buffer.count)
        try segment(padded, realSamples: buffer.count, isLast: true)
        buffer = []
    }

    /// Keeps the frames of the window at `bufferStart` that this window decides.
    private func segment(_ window: [Float], realSamples: Int, isLast: Bool) throws {
        let masks = try segmenter.activeMasks(window)
        let rate = Double(segmenter.sampleRate)
        let from = bufferStart == 0 ? -Double.infinity : marginSeconds
        let to = isLast ? Double(realSamples) / rate : Double(segmenter.windowSamples) / rate - marginSeconds
        let kept = masks.indices.filter { segmenter.centreSeconds(frame: $0) >= from && segmenter.centreSeconds(frame: $0) < to }
        guard let first = kept.first else { return }
        windows.append(LocalActivityWindow(firstCentreSeconds: Double(bufferStart) / rate + segmenter.centreSeconds(frame: first),
                                           frameStepSeconds: segmenter.frameStepSeconds, activeMasks: kept.map { masks[$0] }))
    }
}
