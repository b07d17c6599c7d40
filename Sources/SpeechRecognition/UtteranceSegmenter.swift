import Foundation

/// Cuts a recording into utterances the way a streaming recogniser finalises results: at pauses,
/// and at the quietest moment before an utterance grows past `maxUtteranceSeconds`.
///
/// Each utterance is decoded separately and its word times are offset by its start, so the ranges
/// cover the whole recording without gaps and word times stay on the recording's timeline.
struct UtteranceSegmenter {
    var config: RecognizerConfig

    /// Analysis frame: 10 ms, the decoder's own frame step.
    var frameSize: Int { max(1, config.modelSampleRate / 100) }

    /// Contiguous sample ranges covering `samples` (at `config.modelSampleRate`).
    func utterances(_ samples: [Float]) -> [Range<Int>] {
        guard !samples.isEmpty else { return [] }
        let levels = frameLevels(samples)
        let threshold = pauseThreshold(levels)
        let minPauseFrames = max(1, Int((config.minPauseSeconds * 100).rounded()))
        let maxFrames = max(1, Int(config.maxUtteranceSeconds * 100))

        // Cut in the middle of every long enough pause.
        var cuts: [Int] = []
        var runStart: Int?
        for (index, level) in levels.enumerated() {
            if level < threshold {
                if runStart == nil { runStart = index }
            } else if let start = runStart {
                if index - start >= minPauseFrames, start > 0 { cuts.append((start + index) / 2) }
                runStart = nil
            }
        }

        // Split what is still too long at its quietest frame in the last third of the allowed length.
        var boundaries: [Int] = [0]
        for cut in cuts + [levels.count] {
            while cut - boundaries.last! > maxFrames {
                let start = boundaries.last!
                let window = (start + maxFrames * 2 / 3) ..< (start + maxFrames)
                let quietest = window.min { levels[$0] < levels[$1] } ?? start + maxFrames
                boundaries.append(max(start + 1, quietest))
            }
            if cut > boundaries.last! { boundaries.append(cut) }
        }
        return zip(boundaries, boundaries.dropFirst()).map { start, end in
            (start * frameSize) ..< min(samples.count, end * frameSize)
        }.filter { !$0.isEmpty }
    }

    /// Energy per 10 ms frame in dB relative to full scale; the last frame may be partial.
    func frameLevels(_ samples: [Float]) -> [Double] {
        let count = (samples.count + frameSize - 1) / frameSize
        return (0 ..< count).map { frame in
            let range = (frame * frameSize) ..< min(samples.count, (frame + 1) * frameSize)
            var sum = 0.0
            for i in range { sum += Double(samples[i]) * Double(samples[i]) }
            return 10 * log10(sum / Double(range.count) + 1e-10)
        }
    }

    /// Noise floor (10th percentile of frame levels) plus the configured margin.
    func pauseThreshold(_ levels: [Double]) -> Double {
        let sorted = levels.sorted()
        return sorted[sorted.count / 10] + config.pauseMarginDecibels
    }
}
