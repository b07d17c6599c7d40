import Foundation
import ResourcePooling
import SpeakerSegmentation
import StreamingDiarization
import VoiceActivity

/// pyannote segmentation-3.0 as `OverlapTracker`'s segmenter (speakerkit's overlap pass): 10 s windows,
/// frames binarised at pyannote's 0.5. A provider's sessions share one pool of model runners, each
/// running one window at a time; the first is opened at the first window, not at the plugin's load
/// (a worker loads every plugin, and most never diarize). Any thread.
public struct PyannoteSegmenter: LocalActivitySegmenter, Sendable {
    public let pool: ResourcePool<PyannoteSegmentation, SpeakerSegmentationError>
    private let frames = SegmentationFrames.pyannote3

    /// Nil when the model file is not there (vendor/ without it): speakerkit then runs without the pass.
    public static func vendored(maximumRunners: Int = ProcessInfo.processInfo.activeProcessorCount) -> PyannoteSegmenter? {
        let path = VendorLocation.modelPath(PyannoteSegmentation.modelFileName)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return PyannoteSegmenter(modelPath: path, maximumRunners: maximumRunners)
    }

    public init(modelPath: String, maximumRunners: Int) {
        pool = ResourcePool(maximum: maximumRunners) { () throws(SpeakerSegmentationError) in try PyannoteSegmentation(modelPath: modelPath) }
    }

    public var sampleRate: Int { frames.sampleRate }
    public var windowSamples: Int { 10 * frames.sampleRate }
    public var frameStepSeconds: Double { frames.frameSeconds }
    public func centreSeconds(frame: Int) -> Double { frames.centreSeconds(frame: frame) }

    public func activeMasks(_ window: [Float]) throws -> [UInt8] {
        try pool.withResource { (model) throws(SpeakerSegmentationError) in try model.activity(window).activeMasks() }
    }
}
