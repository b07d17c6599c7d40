/// Where a segmentation model's frames sit in its window: frame i looks at samples
/// [i·shift, i·shift + receptiveField). pyannote segmentation-3.0 at 16 kHz: 991 samples seen
/// (62 ms), one frame every 270 samples (16.9 ms), 589 frames for its 10 s training window.
public struct SegmentationFrames: Sendable, Equatable {
    public var sampleRate: Int
    public var receptiveFieldSamples: Int
    public var shiftSamples: Int

    public static let pyannote3 = SegmentationFrames(sampleRate: 16_000, receptiveFieldSamples: 991, shiftSamples: 270)

    public init(sampleRate: Int, receptiveFieldSamples: Int, shiftSamples: Int) {
        self.sampleRate = sampleRate
        self.receptiveFieldSamples = receptiveFieldSamples
        self.shiftSamples = shiftSamples
    }

    /// Frames the model gives for `samples` samples (0 when shorter than one receptive field).
    public func frameCount(samples: Int) -> Int {
        samples < receptiveFieldSamples ? 0 : (samples - receptiveFieldSamples) / shiftSamples + 1
    }

    /// The centre of frame `frame`, in seconds from the window's start.
    public func centreSeconds(frame: Int) -> Double {
        (Double(frame * shiftSamples) + Double(receptiveFieldSamples) / 2) / Double(sampleRate)
    }

    public var frameSeconds: Double { Double(shiftSamples) / Double(sampleRate) }

    /// The frame whose centre is nearest `seconds` from the window's start (may be out of range).
    public func frame(nearest seconds: Double) -> Int {
        Int(((seconds * Double(sampleRate) - Double(receptiveFieldSamples) / 2) / Double(shiftSamples)).rounded())
    }
}
