import DiarizationModels
import Foundation
import ProviderPluginKit
import SherpaOnnxSpeakers

/// The `speakerkit.NAME` providers: speakerkit with each sherpa-onnx embedding model the operator
/// configured, from the 'speakerkit' section of the provider config file (the catalog format of
/// sherpa-onnx: `embedding_models`, each a path or {path, thresholds}; `threads`) or, without one,
/// SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL, so the model configured for sherpa-onnx serves speakerkit too.
/// GE2E stays `speakerkit`, the default that needs no configuration; `speakerkit.campplus` is the
/// vendored CAM++ with its calibrated thresholds (`VendoredCampPlus`), also without configuration.
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
        var providers: [SpeakerKitProvider] = catalog.embeddingModels.compactMap { model in
            do throws(SherpaOnnxSpeakersError) {
                // An operator's model is opened now, so one that cannot be used is not offered.
                let extractor = try LazyEmbeddingExtractor(modelPath: model.path, threads: catalog.threads)
                _ = try extractor.loaded()
                host.logger.info("loaded embedding model", metadata: [
                    "provider": "speakerkit.\(model.name)", "embedding_model": "\(model.path)", "dimension": "\(extractor.dimension)",
                ])
                return SpeakerKitProvider(runtime: runtime, model: model, extractor: extractor)
            } catch {
                host.logger.error("cannot load embedding model", metadata: ["provider": "speakerkit.\(model.name)", "error": "\(error.message)"])
                return nil
            }
        }
        if let vendored = vendoredCampPlus(besides: catalog, host: host) {
            providers.append(SpeakerKitProvider(runtime: runtime, model: VendoredCampPlus.catalogEntry, extractor: vendored, vendored: true))
        }
        return providers
    }

    /// The CAM++ scripts/setup vendors, as `speakerkit.campplus`, unless the operator named a model so:
    /// checked now, opened by its first session (most servers never start one).
    static func vendoredCampPlus(besides catalog: SherpaOnnxModelCatalog, host: PluginHostConnection) -> LazyEmbeddingExtractor? {
        guard !catalog.embeddingModels.contains(where: { $0.name == VendoredCampPlus.name }) else { return nil }
        do throws(SherpaOnnxSpeakersError) {
            return try LazyEmbeddingExtractor(modelPath: VendoredCampPlus.path)
        } catch {
            host.logger.warning("no speakerkit.\(VendoredCampPlus.name): the vendored model is not usable (run scripts/setup)",
                                metadata: ["error": "\(error.message)"])
            return nil
        }
    }
}
