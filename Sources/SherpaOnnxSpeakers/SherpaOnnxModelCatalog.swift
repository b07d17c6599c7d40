import Foundation

/// The sherpa-onnx models an operator configured for a provider: from its section of the server's
/// provider config file, else from environment variables.
///
///     {"segmentation_model": "/models/segmentation-3.0.onnx",
///      "embedding_models": {"eres2net": "/models/3dspeaker_eres2net.onnx",
///                           "titanet": {"path": "/models/nemo_titanet_small.onnx",
///                                       "thresholds": {"speaker": 0.62, "cluster": 0.41}}},
///      "default_embedding_model": "eres2net", "threads": 1}
///
/// Environment, for what the file does not say: SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL (a path),
/// SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL (a path; the model is named after its file, without
/// `.onnx`). Model names become provider ids (`sherpa-onnx.eres2net`), so they are checked the same way.
public struct SherpaOnnxModelCatalog: Sendable, Equatable {
    public struct EmbeddingModel: Sendable, Equatable {
        public var name: String
        public var path: String
        /// Thresholds calibrated for this model (`speakersync-bench calibrate`), by name: "speaker",
        /// "embedding", "cluster", "enrolled" (the live diarizer's cosine distances), "switch_penalty"
        /// (its finalize's cost of a change of speaker, in the same distance units), "offline" (the
        /// offline pass's clustering), "uncounted_voice_margin" (speakerkit's finalize: how much nearer
        /// a voice the count missed must be to its own centre, in the same units). Missing ones take the
        /// provider's defaults.
        public var thresholds: [String: Double]

        public init(name: String, path: String, thresholds: [String: Double]) {
            self.name = name
            self.path = path
            self.thresholds = thresholds
        }
    }

    /// The names a model's `thresholds` may hold.
    public static let calibratedNames: Set<String> = ["speaker", "embedding", "cluster", "enrolled", "switch_penalty", "offline", "uncounted_voice_margin"]

    public static let segmentationVariable = "SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL"
    public static let embeddingVariable = "SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL"

    public var segmentationModelPath: String?
    /// In the order the operator listed them; the default first.
    public var embeddingModels: [EmbeddingModel]
    public var threads: Int
    /// Where the configuration came from, for messages ("the provider config file", "the environment").
    public var source: String

    public var defaultEmbeddingModel: EmbeddingModel? { embeddingModels.first }

    /// Parses a provider's config section (JSON text, or nil) and the environment. Throws
    /// `.invalidModel` for a section it cannot read (never quoting secrets: there are none here, but
    /// the rule holds for every provider).
    public static func parse(section: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(SherpaOnnxSpeakersError) -> SherpaOnnxModelCatalog {
        var catalog = SherpaOnnxModelCatalog(segmentationModelPath: nil, embeddingModels: [], threads: 1, source: "the environment")
        var object: [String: Any] = [:]
        if let section {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(section.utf8)) as? [String: Any] else {
                throw SherpaOnnxSpeakersError(.invalidModel, "the provider config section is not a JSON object")
            }
            object = parsed
            catalog.source = "the provider config file"
        }
        let known: Set<String> = ["segmentation_model", "embedding_models", "default_embedding_model", "threads"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw SherpaOnnxSpeakersError(.invalidModel, "unknown setting '\(unknown)' in the provider config; known: \(known.sorted().joined(separator: ", "))")
        }
        if let value = object["segmentation_model"] {
            guard let path = value as? String, !path.isEmpty else { throw SherpaOnnxSpeakersError(.invalidModel, "segmentation_model must be a file path") }
            catalog.segmentationModelPath = path
        } else if let path = environment[segmentationVariable], !path.isEmpty {
            catalog.segmentationModelPath = path
        }
        if let value = object["threads"] {
            guard let threads = value as? Int, (1 ... 16).contains(threads) else { throw SherpaOnnxSpeakersError(.invalidModel, "threads must be a whole number from 1 to 16") }
            catalog.threads = threads
        }
        if let value = object["embedding_models"] {
            guard let models = value as? [String: Any] else {
                throw SherpaOnnxSpeakersError(.invalidModel, "embedding_models must be an object of name: path (or name: {path, thresholds})")
            }
            for name in models.keys.sorted() {
                try checkName(name)
                switch models[name] {
                case let path as String:
                    catalog.embeddingModels.append(EmbeddingModel(name: name, path: path, thresholds: [:]))
                case let entry as [String: Any]:
                    guard let path = entry["path"] as? String else { throw SherpaOnnxSpeakersError(.invalidModel, "embedding model '\(name)' needs a path") }
                    var thresholds: [String: Double] = [:]
                    for (key, threshold) in entry["thresholds"] as? [String: Any] ?? [:] {
                        guard calibratedNames.contains(key), let number = threshold as? Double, number > 0, number < 2 else {
                            throw SherpaOnnxSpeakersError(.invalidModel, "embedding model '\(name)': threshold '\(key)' must be one of "
                                + "\(calibratedNames.sorted().joined(separator: ", ")), a value in (0, 2)")
                        }
                        thresholds[key] = number
                    }
                    catalog.embeddingModels.append(EmbeddingModel(name: name, path: path, thresholds: thresholds))
                default:
                    throw SherpaOnnxSpeakersError(.invalidModel, "embedding model '\(name)' must be a path or {path, thresholds}")
                }
            }
            if let chosen = object["default_embedding_model"] {
                guard let name = chosen as? String, let index = catalog.embeddingModels.firstIndex(where: { $0.name == name }) else {
                    throw SherpaOnnxSpeakersError(.invalidModel, "default_embedding_model must name one of embedding_models")
                }
                catalog.embeddingModels.insert(catalog.embeddingModels.remove(at: index), at: 0)
            }
        } else if let path = environment[embeddingVariable], !path.isEmpty {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent.lowercased()
                .map { "abcdefghijklmnopqrstuvwxyz0123456789_-".contains($0) ? $0 : "-" }
            catalog.embeddingModels.append(EmbeddingModel(name: String(String(name).prefix(40)), path: path, thresholds: [:]))
        }
        return catalog
    }

    /// Names become part of provider ids: [a-z0-9_-], 1 to 40 characters.
    static func checkName(_ name: String) throws(SherpaOnnxSpeakersError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_-")
        guard !name.isEmpty, name.count <= 40, name.allSatisfy(allowed.contains) else {
            throw SherpaOnnxSpeakersError(.invalidModel, "embedding model name '\(name)' must be 1 to 40 of a-z 0-9 _ -")
        }
    }
}
