import SpeakerSegmentation

/// A model that gives local speakers' activity over a window of 16 kHz audio (pyannote
/// segmentation-3.0 in production; tests may use a scripted one).
public protocol WindowSegmenter: Sendable {
    var frames: SegmentationFrames { get }
    func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity
}

extension PyannoteSegmentation: WindowSegmenter {}
