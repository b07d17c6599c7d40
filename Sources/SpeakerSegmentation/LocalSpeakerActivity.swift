import Foundation

/// What a segmentation model says about one window: for each frame, the probability that each of its
/// local speakers is talking (several may be, in overlap). Local speakers are numbered per window:
/// speaker 0 of one window need not be speaker 0 of the next.
public struct LocalSpeakerActivity: Sendable, Equatable {
    public let frameCount: Int
    public let speakerCount: Int
    /// Row-major: frame × speaker.
    public private(set) var probabilities: [Float]

    public init(frameCount: Int, speakerCount: Int, probabilities: [Float]) {
        precondition(probabilities.count == frameCount * speakerCount, "probabilities must hold frameCount × speakerCount values")
        self.frameCount = frameCount
        self.speakerCount = speakerCount
        self.probabilities = probabilities
    }

    public func probability(frame: Int, speaker: Int) -> Float {
        probabilities[frame * speakerCount + speaker]
    }

    /// Each frame's talking local speakers as a bit mask (bit k: speaker k at or above `threshold`);
    /// pyannote binarises at 0.5. At most eight local speakers.
    public func activeMasks(threshold: Float = 0.5) -> [UInt8] {
        precondition(speakerCount <= 8, "a mask holds eight local speakers")
        return (0 ..< frameCount).map { frame in
            var mask: UInt8 = 0
            for speaker in 0 ..< speakerCount where probabilities[frame * speakerCount + speaker] >= threshold { mask |= 1 << speaker }
            return mask
        }
    }

    /// The multi-label activity of a powerset model's log-probabilities (`classes` per frame): a
    /// speaker's probability is the sum over the classes that contain them. `powerset` lists each
    /// class's speakers (e.g. pyannote segmentation-3.0: ∅, {0}, {1}, {2}, {0,1}, {0,2}, {1,2}).
    public static func fromPowerset(logProbabilities: [Float], frameCount: Int, powerset: [[Int]], speakerCount: Int) -> LocalSpeakerActivity {
        let classes = powerset.count
        var probabilities = [Float](repeating: 0, count: frameCount * speakerCount)
        for frame in 0 ..< frameCount {
            for (index, members) in powerset.enumerated() where !members.isEmpty {
                let probability = expf(logProbabilities[frame * classes + index])
                for speaker in members { probabilities[frame * speakerCount + speaker] += probability }
            }
        }
        for index in probabilities.indices { probabilities[index] = min(1, probabilities[index]) }
        return LocalSpeakerActivity(frameCount: frameCount, speakerCount: speakerCount, probabilities: probabilities)
    }
}
