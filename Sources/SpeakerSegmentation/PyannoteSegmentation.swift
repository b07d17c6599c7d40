import OnnxRuntime
import VoiceActivity

/// pyannote segmentation-3.0 (MIT; PyanNet: SincNet, four bidirectional LSTM layers, a powerset of up
/// to two of three local speakers per frame), run by onnxruntime. scripts/setup installs the model as
/// vendor/models/pyannote-segmentation-3.0.onnx.
///
/// Any thread: onnxruntime runs one window at a time per instance (`OnnxModelRunner` serialises).
public final class PyannoteSegmentation: Sendable {
    public static let modelFileName = "pyannote-segmentation-3.0.onnx"
    /// The classes of the model's output, in order: which local speakers each one means.
    public static let powerset: [[Int]] = [[], [0], [1], [2], [0, 1], [0, 2], [1, 2]]
    public static let localSpeakerCount = 3

    public let frames = SegmentationFrames.pyannote3
    private let runner: OnnxModelRunner

    public init(modelPath: String = VendorLocation.modelPath(modelFileName), threads: Int = 1,
                libraryDirectory: String = VendorLocation.sherpaLibraryDirectory()) throws(SpeakerSegmentationError) {
        do {
            runner = try OnnxModelRunner(modelPath: modelPath, libraryPath: libraryDirectory + "/" + VendorLocation.onnxRuntimeFileName, threads: threads)
        } catch {
            throw SpeakerSegmentationError(error)
        }
        // One short run proves the file is a segmentation model of this shape, at load rather than mid-session.
        let probe = [Float](repeating: 0, count: frames.sampleRate / 2)
        _ = try probe.withUnsafeBufferPointer { (samples) throws(SpeakerSegmentationError) in try activity(samples) }
    }

    /// The local speakers' activity over `samples` (16 kHz mono, at least one receptive field long).
    public func activity(_ samples: UnsafeBufferPointer<Float>) throws(SpeakerSegmentationError) -> LocalSpeakerActivity {
        let expected = frames.frameCount(samples: samples.count)
        guard expected > 0 else {
            throw SpeakerSegmentationError(.invalidAudio, "\(samples.count) samples; the model needs at least \(frames.receptiveFieldSamples)")
        }
        guard samples.allSatisfy(\.isFinite) else { throw SpeakerSegmentationError(.invalidAudio, "the audio holds a non-finite sample") }
        let classes = Self.powerset.count
        // A frame or two of slack: the model's own arithmetic may round its frame count differently.
        let output: (values: [Float], shape: [Int])
        do {
            output = try runner.run(input: samples, shape: [1, 1, samples.count], inputName: "input", outputName: "output",
                                    outputCapacity: (expected + 4) * classes)
        } catch {
            throw SpeakerSegmentationError(error)
        }
        guard output.shape.count == 3, output.shape[0] == 1, output.shape[2] == classes, abs(output.shape[1] - expected) <= 2 else {
            throw SpeakerSegmentationError(.invalidModel, "\(runner.modelPath): output shape \(output.shape), expected [1, \(expected), \(classes)]")
        }
        return LocalSpeakerActivity.fromPowerset(logProbabilities: output.values, frameCount: output.shape[1], powerset: Self.powerset,
                                                 speakerCount: Self.localSpeakerCount)
    }

    public func activity(_ samples: [Float]) throws(SpeakerSegmentationError) -> LocalSpeakerActivity {
        try samples.withUnsafeBufferPointer { (buffer) throws(SpeakerSegmentationError) in try activity(buffer) }
    }
}
