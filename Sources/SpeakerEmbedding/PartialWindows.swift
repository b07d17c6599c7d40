import Foundation

/// resemblyzer's `compute_partial_slices`: where an utterance is cut into 1.6 s partials (160 mel
/// frames), one every 1/rate seconds rounded to whole frames, the last kept only when real audio
/// covers at least `minimumCoverage` of it (always at least one partial).
enum PartialWindows {
    static let frameCount = 160

    /// Frames between partial starts: round(100 / rate), as numpy rounds (half to even). Must be 1…160
    /// for the partials to cover the audio; `SpeakerEncoder` refuses rates outside that.
    static func frameStep(partialsPerSecond: Double) -> Int {
        let frames = (Double(MelFrontEnd.sampleRate) / partialsPerSecond / Double(MelFrontEnd.hopLength)).rounded(.toNearestOrEven)
        return frames.isFinite && abs(frames) < 1e9 ? Int(frames) : 0
    }

    /// The first mel frame of each partial; partial i spans frames [start, start + 160) and samples
    /// [160·start, 160·(start + 160)), which may run past the audio (the caller zero-pads).
    static func frameStarts(sampleCount: Int, partialsPerSecond: Double, minimumCoverage: Double) -> [Int] {
        let hop = MelFrontEnd.hopLength
        let melFrames = Int((Double(sampleCount + 1) / Double(hop)).rounded(.up))
        let step = max(1, min(frameCount, frameStep(partialsPerSecond: partialsPerSecond)))
        let steps = max(1, melFrames - frameCount + step + 1)
        var starts = Array(stride(from: 0, to: steps, by: step))
        let lastStartSample = starts[starts.count - 1] * hop
        let coverage = Double(sampleCount - lastStartSample) / Double(frameCount * hop)
        if coverage < minimumCoverage, starts.count > 1 { starts.removeLast() }
        return starts
    }
}
