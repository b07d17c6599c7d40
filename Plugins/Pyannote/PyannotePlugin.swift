import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import ProviderPluginKit
import OverlapDiarization
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

    static func provider(host: PluginHostConnection) -> PyannoteProvider {
        do throws(PyannoteModelsUnavailable) {
            let models = try PyannoteModels(segmentationPath: VendorLocation.modelPath(PyannoteSegmentation.modelFileName),
                                            embeddingPath: VendoredCampPlus.path)
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

/// The shared segmentation runners (DiarizationModels) as the overlap pipeline's segmenter.
extension PyannoteSegmenter: WindowSegmenter {}
