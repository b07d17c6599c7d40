/// Mel power frames as the encoder consumes them: `frameCount` frames of 40 channels, frame-major
/// (frame t's channels are values[40·t ..< 40·t + 40]). Power, not log: resemblyzer feeds the LSTM
/// the filterbank energies directly.
public struct MelSpectrogram: Sendable, Equatable {
    public static let channelCount = 40

    public var frameCount: Int
    public var values: [Float]

    public init(frameCount: Int, values: [Float]) {
        precondition(values.count == frameCount * Self.channelCount, "a mel spectrogram holds 40 values per frame")
        self.frameCount = frameCount
        self.values = values
    }

    /// Frames [start, start + count) as their own spectrogram.
    public func frames(_ range: Range<Int>) -> MelSpectrogram {
        MelSpectrogram(
            frameCount: range.count,
            values: Array(values[range.lowerBound * Self.channelCount ..< range.upperBound * Self.channelCount]))
    }
}
