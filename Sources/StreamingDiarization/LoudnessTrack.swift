#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The session's loudness in 10 ms blocks, kept for the whole session (one byte per block: 360 KB an
/// hour) so that a change of speaker can be moved into the pause between the two voices, even at
/// finalize when the audio itself is long gone.
///
/// Why: the VAD holds speech through pauses shorter than its minimum silence (0.8 s, needed for
/// quiet meeting speech), so two people's turns with a 0.6 s pause between them arrive as one stretch
/// of speech, and frame-aligned turns would label the pause as speech. Where the speaker changes, the
/// pause belongs to neither.
struct LoudnessTrack: Sendable {
    static let blockSeconds = 0.01
    /// dB relative to full scale, + 120, clamped to 0...255 (0.5 dB steps are not needed: 1 dB is).
    private(set) var blocks: [UInt8] = []
    private var pendingEnergy: Double = 0
    private var pendingCount = 0
    let blockSamples: Int

    init(sampleRate: Int) {
        blockSamples = max(1, Int((Double(sampleRate) * Self.blockSeconds).rounded()))
    }

    mutating func append(_ samples: [Float]) {
        for sample in samples {
            pendingEnergy += Double(sample) * Double(sample)
            pendingCount += 1
            if pendingCount == blockSamples {
                let meanSquare = pendingEnergy / Double(blockSamples)
                let decibels = meanSquare > 1e-12 ? 10 * log10(meanSquare) : -120
                blocks.append(UInt8(max(0, min(255, (decibels + 120).rounded()))))
                pendingEnergy = 0
                pendingCount = 0
            }
        }
    }

    /// The longest stretch near `seconds` (within `radiusSeconds`) that is at least `minimumSeconds`
    /// long and `dropDecibels` below the loudest block of its surroundings (`radiusSeconds` further
    /// on each side); nil when there is none, as in overlapped or continuous speech.
    func pause(near seconds: Double, radiusSeconds: Double, minimumSeconds: Double, dropDecibels: Double) -> (startSeconds: Double, endSeconds: Double)? {
        let block = Self.blockSeconds
        let lower = max(0, Int(((seconds - radiusSeconds) / block).rounded(.down)))
        let upper = min(blocks.count, Int(((seconds + radiusSeconds) / block).rounded(.up)))
        guard upper - lower > 0 else { return nil }
        let contextLower = max(0, lower - Int(radiusSeconds / block))
        let contextUpper = min(blocks.count, upper + Int(radiusSeconds / block))
        let loudest = Double(blocks[contextLower ..< contextUpper].max()!)
        let quiet = loudest - dropDecibels
        let best = Self.runs(in: lower ..< upper) { Double(blocks[$0]) < quiet }.max { $0.count < $1.count }
        guard let best, Double(best.count) * block >= minimumSeconds - 1e-9 else { return nil }
        return (Double(best.lowerBound) * block, Double(best.upperBound) * block)
    }

    /// Every pause in the session: runs of at least `minimumSeconds` whose blocks are all
    /// `dropDecibels` below the loudest block within `contextSeconds` on either side. One pass with
    /// a sliding maximum, so a long session costs little at finalize.
    func pauses(minimumSeconds: Double, dropDecibels: Double, contextSeconds: Double) -> [(startSeconds: Double, endSeconds: Double)] {
        let block = Self.blockSeconds
        let reach = max(0, Int((contextSeconds / block).rounded()))
        let minimumBlocks = max(1, Int((minimumSeconds / block - 1e-9).rounded(.up)))
        // Indices of blocks in the window [index − reach, index + reach], loudness decreasing; the
        // blocks are visited in order, so the window only slides forward.
        var window: [Int] = []
        var head = 0
        var added = 0
        let quietRuns = Self.runs(in: 0 ..< blocks.count) { index in
            while added < blocks.count, added <= index + reach {
                while window.count > head, blocks[window[window.count - 1]] <= blocks[added] { window.removeLast() }
                window.append(added)
                added += 1
            }
            while window[head] < index - reach { head += 1 }
            return Double(blocks[index]) < Double(blocks[window[head]]) - dropDecibels
        }
        return quietRuns.filter { $0.count >= minimumBlocks }.map { (Double($0.lowerBound) * block, Double($0.upperBound) * block) }
    }

    /// The maximal runs of consecutive indices in `range` where `isQuiet` holds; `isQuiet` is asked
    /// once per index, in increasing order.
    private static func runs(in range: Range<Int>, where isQuiet: (Int) -> Bool) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var runStart: Int?
        for index in range {
            if isQuiet(index) {
                if runStart == nil { runStart = index }
            } else if let start = runStart {
                result.append(start ..< index)
                runStart = nil
            }
        }
        if let start = runStart { result.append(start ..< range.upperBound) }
        return result
    }
}
