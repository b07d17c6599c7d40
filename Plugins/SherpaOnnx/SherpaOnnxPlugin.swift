import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import ResourcePooling
import Logging
import ProviderPluginKit
import SherpaOnnxSpeakers

/// The `sherpa-onnx` plugin: providers built on sherpa-onnx's speaker APIs with the operator's models
/// (docs/sherpa-onnx.md). `sherpa-onnx` uses the default embedding model, `sherpa-onnx.NAME`
/// each other configured one. Without models (or with a model sherpa-onnx cannot load) the plugin still
/// loads and lists `sherpa-onnx` as unavailable with what to configure.
@_cdecl("speakersync_plugin_entry")
public func speakersyncPluginEntry() -> UnsafePointer<speakersync_plugin_entry_t> {
    PluginEntryTables.entry(name: "sherpa-onnx") { host in
        SherpaOnnxPlugin.providers(host: host)
    }
}

enum SherpaOnnxPlugin {
    static let providerID = "sherpa-onnx"

    static func providers(host: PluginHostConnection) -> [any PluginProvider] {
        let catalog: SherpaOnnxModelCatalog
        do {
            catalog = try SherpaOnnxModelCatalog.parse(section: host.configuration(for: providerID))
        } catch {
            return [SherpaOnnxProvider.unavailable("the provider config for \(providerID) is not usable: \(error.message)", logger: host.logger)]
        }
        guard let segmentation = catalog.segmentationModelPath, !catalog.embeddingModels.isEmpty else {
            return [SherpaOnnxProvider.unavailable(
                "no models configured: set \(SherpaOnnxModelCatalog.segmentationVariable) to a pyannote segmentation ONNX model "
                    + "and \(SherpaOnnxModelCatalog.embeddingVariable) to a speaker embedding ONNX model, or give them in the "
                    + "'\(providerID)' section of the provider config file (serve --provider-config; docs/sherpa-onnx.md says where to get them)", logger: host.logger)]
        }
        let detectors: SpeechDetectorPool
        do {
            detectors = try SpeechDetectorPool(logger: host.logger)
        } catch {
            return [SherpaOnnxProvider.unavailable("the silero VAD is not installed: \(error) (run scripts/setup)", logger: host.logger)]
        }
        return catalog.embeddingModels.enumerated().map { index, model in
            let id = index == 0 ? providerID : "\(providerID).\(model.name)"
            do throws(SherpaOnnxSpeakersError) {
                let extractor = try SpeakerEmbeddingExtractor(modelPath: model.path, threads: catalog.threads)
                let offline = try OfflineDiarizerPool(segmentationModelPath: segmentation, embeddingModelPath: model.path,
                                                      threads: catalog.threads)
                host.logger.info("loaded models", metadata: [
                    "provider": "\(id)", "embedding_model": "\(model.path)", "dimension": "\(extractor.dimension)",
                    "framework": "\(extractor.model.metadata["framework"] ?? "")", "segmentation_model": "\(segmentation)",
                ])
                return SherpaOnnxProvider(id: id, model: model, extractor: extractor, offline: offline, detectors: detectors, logger: host.logger)
            } catch {
                host.logger.warning("cannot load models", metadata: ["provider": "\(id)", "error": "\(error)"])
                return SherpaOnnxProvider.unavailable("cannot load its models: \(error.message)", id: id, model: model, logger: host.logger)
            }
        }
    }
}

/// Offline diarizers for finalize, made as needed up to one per core: each runs one recording at a
/// time, and several sessions may finalize at once.
final class OfflineDiarizerPool: Sendable {
    private let pool: ResourcePool<OfflineSpeakerDiarizer, SherpaOnnxSpeakersError>

    /// Makes the first diarizer now, so a model sherpa-onnx cannot use fails loading, not a session.
    init(segmentationModelPath: String, embeddingModelPath: String, threads: Int) throws(SherpaOnnxSpeakersError) {
        let make = { () throws(SherpaOnnxSpeakersError) -> OfflineSpeakerDiarizer in
            try OfflineSpeakerDiarizer(segmentationModelPath: segmentationModelPath, embeddingModelPath: embeddingModelPath, threads: threads)
        }
        pool = ResourcePool(first: try make(), maximum: ProcessInfo.processInfo.activeProcessorCount, make: make)
    }

    func process(_ samples: UnsafeBufferPointer<Float>, clustering: OfflineSpeakerDiarizer.Clustering) throws(SherpaOnnxSpeakersError) -> [OfflineSpeakerDiarizer.Segment] {
        try pool.withResource { (diarizer) throws(SherpaOnnxSpeakersError) in try diarizer.process(samples, clustering: clustering) }
    }
}
