import DiarizationModels
import Foundation
import ProviderPluginKit
import SherpaOnnxSpeakers

/// The `speakerkit.NAME` providers: speakerkit with each sherpa-onnx embedding model the operator
/// configured, from the 'speakerkit' section of the provider config file (the catalog format of
/// sherpa-onnx: `embedding_models`, each a path or {path, thresholds}; `threads`) or, without one,
/// SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL, so the model configured for sherpa-onnx serves speakerkit too.
/// GE2E stays `speakerkit`, the default that needs no configuration.
enum SpeakerKitModels {
    static func providers(runtime: SpeakerKitRuntime, host: PluginHostConnection) -> [SpeakerKitProvider] {
        let catalog: SherpaOnnxModelCatalog
        do {
            catalog = try SherpaOnnxModelCatalog.parse(section: host.configuration(for: "speakerkit"))
        } catch {
            // `speakerkit` (GE2E) still serves; the operator sees why the named ones are missing.
            host.logger.error("the 'speakerkit' provider config is not usable; no speakerkit.NAME providers", metadata: ["error": "\(error.message)"])
            return []
        }
        return catalog.embeddingModels.compactMap { model in
            do throws(SherpaOnnxSpeakersError) {
                let extractor = try SpeakerEmbeddingExtractor(modelPath: model.path, threads: catalog.threads)
                host.logger.info("loaded embedding model", metadata: [
                    "provider": "speakerkit.\(model.name)", "embedding_model": "\(model.path)", "dimension": "\(extractor.dimension)",
                ])
                return SpeakerKitProvider(runtime: runtime, model: model, extractor: extractor)
            } catch {
                host.logger.error("cannot load embedding model", metadata: ["provider": "speakerkit.\(model.name)", "error": "\(error.message)"])
                return nil
            }
        }
    }
}
