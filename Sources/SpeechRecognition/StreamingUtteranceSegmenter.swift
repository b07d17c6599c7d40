import Foundation

/// `UtteranceSegmenter`'s cuts made while the audio arrives: fed samples at the model's rate in chunks
/// of any size, it returns each utterance as soon as its end is known, as a range of absolute samples.
///
/// Same rule as the batch segmenter: an utterance ends in the middle of a pause of at least
/// `minPauseSeconds` (10 ms frames quieter than the noise floor plus `pauseMarginDecibels`), and an
/// utterance about to grow past `maxUtteranceSeconds` is split at its quietest frame in the last third.
/// What a stream cannot do the same way: the floor is the 10th percentile of the recent frames only
/// (`NoiseFloorEstimate`), and a pause that goes on past `closingPauseSeconds` is cut then, half that
/// after it began, instead of in its middle once speech resumes (which may be never).
///
/// The cuts depend only on the samples, never on how they were chunked.
struct StreamingUtteranceSegmenter {
    let frameSize: Int
    let pauseMarginDecibels: Double
    let minPauseFrames: Int
    let closingPauseFrames: Int
    let maxFrames: Int
    let warmUpFrames: Int

    private var floor: NoiseFloorEstimate
    /// Samples of the frame not yet complete.
    private var partial: [Float] = []
    /// Complete frames seen so far.
    private(set) var frameCount = 0
    /// First frame of the open utterance, and the levels of its frames so far.
    private(set) var utteranceStartFrame = 0
    private var levels: [Double] = []
    /// The pause under way (its first frame), and whether it has already closed an utterance.
    private var pauseStart: Int?
    private var pauseClosed = false

    init(config: RecognizerConfig, streaming: StreamingRecognizerConfig = .default) {
        frameSize = max(1, config.modelSampleRate / 100)
        pauseMarginDecibels = config.pauseMarginDecibels
        minPauseFrames = max(1, Int((config.minPauseSeconds * 100).rounded()))
        closingPauseFrames = max(minPauseFrames, Int((streaming.closingPauseSeconds * 100).rounded()))
        maxFrames = max(1, Int(config.maxUtteranceSeconds * 100))
        warmUpFrames = max(0, Int((streaming.warmUpSeconds * 100).rounded()))
        floor = NoiseFloorEstimate(windowFrames: max(1, Int((streaming.noiseFloorWindowSeconds * 100).rounded())))
    }

    /// Samples received so far.
    var sampleCount: Int { frameCount * frameSize + partial.count }

    /// Feeds the next samples; returns the utterances they closed, in order.
    mutating func process(_ samples: some Collection<Float>) -> [Range<Int>] {
        var buffer = partial
        buffer.append(contentsOf: samples)
        var closed: [Range<Int>] = []
        var offset = 0
        while offset + frameSize <= buffer.count {
            var sum = 0.0
            for i in offset ..< offset + frameSize { sum += Double(buffer[i]) * Double(buffer[i]) }
            closed += addFrame(level: 10 * log10(sum / Double(frameSize) + 1e-10))
            offset += frameSize
        }
        partial = Array(buffer[offset...])
        return closed
    }

    /// Ends the stream: the open utterance up to the last sample, or nil when it is empty.
    mutating func finish() -> Range<Int>? {
        let range = (utteranceStartFrame * frameSize) ..< sampleCount
        frameCount += partial.isEmpty ? 0 : 1
        partial = []
        utteranceStartFrame = frameCount
        levels = []
        pauseStart = nil
        return range.isEmpty ? nil : range
    }

    private mutating func addFrame(level: Double) -> [Range<Int>] {
        let frame = frameCount
        frameCount += 1
        floor.add(level)
        levels.append(level)
        var closed: [Range<Int>] = []
        let warm = frameCount >= warmUpFrames
        if level < floor.percentile(0.1) + pauseMarginDecibels {
            if pauseStart == nil {
                pauseStart = frame
                pauseClosed = false
            }
            // A long pause: close now rather than wait for the next speech. (A pause at the very start of
            // the stream, as in the batch segmenter, is not a cut.)
            if let start = pauseStart, !pauseClosed, start > 0, warm, frame + 1 - start >= closingPauseFrames {
                closed += close(at: start + closingPauseFrames / 2)
                pauseClosed = true
            }
        } else {
            if let start = pauseStart, !pauseClosed, start > 0, warm, frame - start >= minPauseFrames {
                closed += close(at: (start + frame) / 2)
            }
            pauseStart = nil
        }
        if frameCount - utteranceStartFrame > maxFrames {
            let start = utteranceStartFrame
            let window = (start + maxFrames * 2 / 3) ..< (start + maxFrames)
            let quietest = window.min { levels[$0 - start] < levels[$1 - start] } ?? start + maxFrames
            closed += close(at: max(start + 1, quietest))
        }
        return closed
    }

    /// Ends the open utterance before frame `cut` (nothing when that would leave it empty).
    private mutating func close(at cut: Int) -> [Range<Int>] {
        guard cut > utteranceStartFrame else { return [] }
        let range = (utteranceStartFrame * frameSize) ..< (cut * frameSize)
        levels.removeFirst(cut - utteranceStartFrame)
        utteranceStartFrame = cut
        return [range]
    }
}
