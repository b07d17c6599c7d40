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
        let segmentationPath = VendorLocation.modelPath(PyannoteSegmentation.modelFileName)
        let embeddingPath = VendorLocation.modelPath(embeddingModelFileName)
        do {
            let segmenters = try SegmenterPool(modelPath: segmentationPath)
            let extractor: SpeakerEmbeddingExtractor
            do throws(SherpaOnnxSpeakersError) {
                extractor = try SpeakerEmbeddingExtractor(modelPath: embeddingPath)
            } catch {
                return .unavailable("cannot load the embedding model: \(error.message) (run scripts/setup)", logger: host.logger)
            }
            host.logger.info("loaded models", metadata: [
                "provider": "\(providerID)", "segmentation_model": "\(segmentationPath)", "embedding_model": "\(embeddingPath)",
                "dimension": "\(extractor.dimension)",
            ])
            return PyannoteProvider(segmenters: segmenters, extractor: extractor, logger: host.logger)
        } catch {
            return .unavailable("cannot load the segmentation model: \(error.message)", logger: host.logger)
        }
    }
}

/// Segmentation models, made as needed up to one per core: one onnxruntime session runs one window
/// at a time, and a worker's sessions run on several queues.
final class SegmenterPool: WindowSegmenter {
    let frames = SegmentationFrames.pyannote3
    private let pool: ResourcePool<PyannoteSegmentation, SpeakerSegmentationError>

    /// Makes the first model now, so a file onnxruntime cannot use fails loading, not a session.
    init(modelPath: String) throws(SpeakerSegmentationError) {
        let make = { () throws(SpeakerSegmentationError) -> PyannoteSegmentation in try PyannoteSegmentation(modelPath: modelPath) }
        pool = ResourcePool(first: try make(), maximum: ProcessInfo.processInfo.activeProcessorCount, make: make)
    }

    func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity {
        try pool.withResource { (model) throws(SpeakerSegmentationError) in try model.activity(samples) }
    }
}
