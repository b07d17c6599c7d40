import CSpeakerSyncPluginABI
import Foundation
import ProviderPluginKit
import OverlapDiarization
import ResourcePooling
import SherpaOnnxSpeakers
import SpeakerSegmentation
import VoiceActivity

/// The `pyannote` plugin: the overlap-aware streaming pipeline (`OverlapDiarizer`) on the models
/// scripts/setup installs in vendor/models — pyannote segmentation-3.0 and 3D-Speaker CAM++ — so it
/// needs no configuration (docs/pyannote.md). Without the models it still loads and lists `pyannote`
/// as unavailable, saying what to run.
@_cdecl("speakersync_plugin_entry")
public func speakersyncPluginEntry() -> UnsafePointer<speakersync_plugin_entry_t> {
    PluginEntryTables.entry(name: "pyannote") { host in
        [PyannotePlugin.provider(host: host)]
    }
}

enum PyannotePlugin {
    static let providerID = "pyannote"
    static let embeddingModelFileName = "campplus-zh-en-common-advanced.onnx"

    static func provider(host: PluginHostConnection) -> PyannoteProvider {
        do throws(PyannoteModelsUnavailable) {
            let models = try PyannoteModels(segmentationPath: VendorLocation.modelPath(PyannoteSegmentation.modelFileName),
                                            embeddingPath: VendorLocation.modelPath(embeddingModelFileName))
            host.logger.info("found models (opened by the first session)", metadata: [
                "provider": "\(providerID)", "segmentation_model": "\(models.segmentationPath)",
                "embedding_model": "\(models.embeddingPath)", "dimension": "\(models.dimension)",
            ])
            return PyannoteProvider(models: models, logger: host.logger)
        } catch {
            return .unavailable(error.message, logger: host.logger)
        }
    }
}

/// Segmentation models, made as needed up to one per core: one onnxruntime session runs one window
/// at a time, and a worker's sessions run on several queues.
final class SegmenterPool: WindowSegmenter {
    let frames = SegmentationFrames.pyannote3
    private let pool: ResourcePool<PyannoteSegmentation, SpeakerSegmentationError>

    /// Makes nothing yet: `prepare()` makes the first model when a session starts.
    init(modelPath: String) {
        let make = { () throws(SpeakerSegmentationError) -> PyannoteSegmentation in try PyannoteSegmentation(modelPath: modelPath) }
        pool = ResourcePool(maximum: ProcessInfo.processInfo.activeProcessorCount, make: make)
    }

    /// Makes the first model if none is made, so a file onnxruntime cannot use fails a session's start
    /// rather than its first window.
    func prepare() throws(SpeakerSegmentationError) {
        try pool.withResource { (_) throws(SpeakerSegmentationError) in }
    }

    func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity {
        try pool.withResource { (model) throws(SpeakerSegmentationError) in try model.activity(samples) }
    }
}
