import Foundation
import ResourcePooling
import SpeakerSegmentation
import StreamingDiarization
import VoiceActivity

/// pyannote segmentation-3.0 shared by a provider's sessions: a pool of model runners, made as needed
/// up to `maximumRunners` (one onnxruntime session runs one window at a time, and a worker's sessions
/// run on several queues); the first is opened at the first window or at `prepare()`, not at the
/// plugin's load (a worker loads every plugin, and most never diarize). The `pyannote` provider's
/// windows (`activity`) and speakerkit's overlap pass (`OverlapTracker`'s 10 s windows, frames
/// binarised at pyannote's 0.5) both run through it. Any thread.
public struct PyannoteSegmenter: LocalActivitySegmenter, Sendable {
    public let pool: ResourcePool<PyannoteSegmentation, SpeakerSegmentationError>
    public let frames = SegmentationFrames.pyannote3

    /// Nil when the model file is not there (vendor/ without it): speakerkit then runs without the pass.
    public static func vendored(maximumRunners: Int = ProcessInfo.processInfo.activeProcessorCount) -> PyannoteSegmenter? {
        let path = VendorLocation.modelPath(PyannoteSegmentation.modelFileName)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return PyannoteSegmenter(modelPath: path, maximumRunners: maximumRunners)
    }

    public init(modelPath: String, maximumRunners: Int = ProcessInfo.processInfo.activeProcessorCount) {
        pool = ResourcePool(maximum: maximumRunners) { () throws(SpeakerSegmentationError) in try PyannoteSegmentation(modelPath: modelPath) }
    }

    /// Makes the first runner if none is made, so a file onnxruntime cannot use fails a session's start
    /// rather than its first window.
    public func prepare() throws(SpeakerSegmentationError) {
        try pool.withResource { (_) throws(SpeakerSegmentationError) in }
    }

    /// The local speakers' activity over `samples` (at least one receptive field of 16 kHz audio).
    public func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity {
        try pool.withResource { (model) throws(SpeakerSegmentationError) in try model.activity(samples) }
    }

    public var sampleRate: Int { frames.sampleRate }
    public var windowSamples: Int { 10 * frames.sampleRate }
    public var frameStepSeconds: Double { frames.frameSeconds }
    public func centreSeconds(frame: Int) -> Double { frames.centreSeconds(frame: frame) }

    public func activeMasks(_ window: [Float]) throws -> [UInt8] {
        try window.withUnsafeBufferPointer { try activity($0) }.activeMasks()
    }
}
