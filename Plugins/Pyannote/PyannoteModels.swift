import DiarizationModels
import Foundation
import SherpaOnnxSpeakers
import SpeakerSegmentation
import VoiceActivity

/// The two models of the `pyannote` provider, loaded by the first session that needs them.
///
/// Why lazily: every server loads every plugin in its worker, and most servers never start a
/// `pyannote` session; opening segmentation-3.0 (with its probe run) and CAM++ at load made every
/// server start pay for them. Loading checks only what is cheap — both files exist and CAM++'s metadata
/// names an embedding model — so a missing model still lists the provider as unavailable at once.
final class PyannoteModels: Sendable {
    let segmentationPath: String
    let segmenters: PyannoteSegmenter
    /// CAM++, checked now and opened by the first session (`LazyEmbeddingExtractor`).
    let embedding: LazyEmbeddingExtractor

    var embeddingPath: String { embedding.modelPath }
    /// The embedding's size, from the model's metadata: known before the model is opened, so enrolled
    /// profiles from another embedding space can be told apart.
    var dimension: Int { embedding.dimension }

    /// Checks the files without opening them; throws the reason the provider is unavailable.
    init(segmentationPath: String, embeddingPath: String) throws(PyannoteModelsUnavailable) {
        guard FileManager.default.fileExists(atPath: segmentationPath) else {
            throw PyannoteModelsUnavailable("no segmentation model at \(segmentationPath) (run scripts/setup)")
        }
        do throws(SherpaOnnxSpeakersError) {
            embedding = try LazyEmbeddingExtractor(modelPath: embeddingPath)
        } catch {
            throw PyannoteModelsUnavailable("cannot use the embedding model: \(error.message) (run scripts/setup)")
        }
        self.segmentationPath = segmentationPath
        segmenters = PyannoteSegmenter(modelPath: segmentationPath)
    }

    /// Opens both models if they are not open yet (the first session's start pays, once per worker).
    func loaded() throws(PyannoteModelsUnavailable) -> SpeakerEmbeddingExtractor {
        do throws(SpeakerSegmentationError) {
            try segmenters.prepare()
        } catch {
            throw PyannoteModelsUnavailable("cannot load the segmentation model: \(error.message)")
        }
        do throws(SherpaOnnxSpeakersError) {
            return try embedding.loaded()
        } catch {
            throw PyannoteModelsUnavailable("cannot load the embedding model: \(error.message) (run scripts/setup)")
        }
    }
}

/// Why the `pyannote` models cannot be used: said by the provider's descriptor or a refused session.
struct PyannoteModelsUnavailable: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
