/// What sherpa-onnx 2.0.1's loaders require of a model file, checked before the file reaches them
/// (they end the process instead of returning an error). From the loaders' source
/// (offline-speaker-segmentation-pyannote-model.cc, speaker-embedding-extractor-general-impl.h and
/// -nemo-impl.h) and checked against the 2.0.1 library with generated models.
public enum SherpaOnnxModelCheck {
    /// The embedding frameworks sherpa-onnx implements; any other gives an extractor that crashes on use.
    public static let frameworks: Set<String> = ["wespeaker", "3d-speaker", "nemo"]

    /// A speaker embedding model: returns its embedding size. Throws `.invalidModel` naming the problem.
    @discardableResult
    public static func embeddingModel(_ model: OnnxModelDescription, path: String) throws(SherpaOnnxSpeakersError) -> Int {
        func fail(_ message: String) -> SherpaOnnxSpeakersError {
            SherpaOnnxSpeakersError(.invalidModel, "\(path) is not a speaker embedding model sherpa-onnx can load: \(message)")
        }
        let meta = model.metadata
        guard let framework = meta["framework"], frameworks.contains(framework) else {
            throw fail("its metadata 'framework' is \(meta["framework"].map { "'\($0)'" } ?? "missing"); it must be one of \(frameworks.sorted().joined(separator: ", "))")
        }
        let isNeMo = framework == "nemo"
        let required = isNeMo ? ["output_dim", "feat_dim", "sample_rate", "window_size_ms", "window_stride_ms"]
                              : ["output_dim", "sample_rate", "normalize_samples"]
        for key in required where Int(meta[key] ?? "") == nil {
            throw fail("its metadata '\(key)' is \(meta[key].map { "'\($0)', not a whole number" } ?? "missing")")
        }
        guard let language = meta["language"], !language.isEmpty else { throw fail("its metadata 'language' is missing or empty") }
        let dimension = Int(meta["output_dim"]!)!
        guard dimension > 0, Int(meta["sample_rate"]!)! > 0 else { throw fail("output_dim and sample_rate must be positive") }
        if let normalize = meta["feature_normalize_type"], !normalize.isEmpty {
            let allowed = isNeMo ? "per_feature" : "global-mean"
            guard normalize == allowed else { throw fail("its metadata 'feature_normalize_type' is '\(normalize)'; \(framework) models take only '\(allowed)'") }
        }
        guard let input = model.inputs.first, input.elementType == OnnxModelDescription.floatType, input.dimensions.count == 3 else {
            throw fail("its first input must be a float tensor of rank 3 (features)")
        }
        if !isNeMo, let bins = input.dimensions[2], bins != 80 {
            throw fail("its input has \(bins) feature bins; sherpa-onnx computes 80")
        }
        let outputIndex = isNeMo ? 1 : 0
        guard model.outputs.count > outputIndex, model.outputs[outputIndex].dimensions.count == 2 else {
            throw fail("output \(outputIndex) must be the embedding, of rank 2")
        }
        if let size = model.outputs[outputIndex].dimensions[1], size != dimension {
            throw fail("its embedding output has \(size) values but its metadata 'output_dim' says \(dimension)")
        }
        return dimension
    }

    /// A pyannote segmentation model (segmentation-3.0 as sherpa-onnx exports it). Throws `.invalidModel`.
    public static func segmentationModel(_ model: OnnxModelDescription, path: String, sampleRate: Int = 16_000) throws(SherpaOnnxSpeakersError) {
        func fail(_ message: String) -> SherpaOnnxSpeakersError {
            SherpaOnnxSpeakersError(.invalidModel, "\(path) is not a pyannote segmentation model sherpa-onnx can load: \(message)")
        }
        var values: [String: Int] = [:]
        for key in ["sample_rate", "window_size", "receptive_field_size", "receptive_field_shift", "num_speakers",
                    "powerset_max_classes", "num_classes"] {
            guard let value = model.metadata[key].flatMap({ Int($0) }), value >= 0 else {
                throw fail("its metadata '\(key)' is \(model.metadata[key].map { "'\($0)', not a whole number ≥ 0" } ?? "missing")")
            }
            values[key] = value
        }
        guard values["sample_rate"] == sampleRate else { throw fail("it is for \(values["sample_rate"]!) Hz audio; sessions are \(sampleRate) Hz") }
        guard values["window_size"]! > 0, values["receptive_field_shift"]! > 0 else { throw fail("window_size and receptive_field_shift must be positive") }
        let speakers = values["num_speakers"]!, maximum = values["powerset_max_classes"]!
        guard speakers > 0, (1 ... 2).contains(maximum) else {
            throw fail("num_speakers must be positive and powerset_max_classes 1 or 2 (sherpa-onnx handles no more)")
        }
        let classes = 1 + speakers + (maximum == 2 ? speakers * (speakers - 1) / 2 : 0)
        guard values["num_classes"] == classes else {
            throw fail("num_classes is \(values["num_classes"]!); a powerset of \(speakers) speakers, at most \(maximum) at once, has \(classes)")
        }
        guard let input = model.inputs.first, input.elementType == OnnxModelDescription.floatType, input.dimensions.count == 3 else {
            throw fail("its first input must be a float waveform tensor of rank 3 ([N, 1, samples])")
        }
        guard let output = model.outputs.first, output.dimensions.count == 3 else {
            throw fail("its first output must be of rank 3 ([N, frames, classes])")
        }
        if let count = output.dimensions[2], count != classes {
            throw fail("its output has \(count) classes; its metadata says \(classes)")
        }
    }
}
