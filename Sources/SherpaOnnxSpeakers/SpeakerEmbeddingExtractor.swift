import CSherpaOnnxSpeakers
import Foundation
import VoiceActivity

/// A sherpa-onnx speaker embedding model (3D-Speaker CAM++/ERes2Net, WeSpeaker ResNet, NeMo TitaNet):
/// 16 kHz audio in, one embedding of `dimension` floats out (not normalised; compare by cosine).
///
/// The model file is checked first (`SherpaOnnxModelCheck`): sherpa-onnx ends the process on a model it
/// cannot use. One extractor serves every session of a process at once: computing an embedding keeps
/// its state in a stream of its own, and onnxruntime's sessions may run concurrently.
public final class SpeakerEmbeddingExtractor: @unchecked Sendable {
    public let modelPath: String
    public let dimension: Int
    /// The model's own description (its metadata names the framework and language).
    public let model: OnnxModelDescription
    private let api: SherpaOnnxSpeakerAPI
    private let handle: OpaquePointer

    /// The fewest samples an embedding is computed from (25 ms: one fbank frame; the NeMo front end
    /// needs the same). Shorter audio is refused rather than given an embedding of zeros.
    public static let minimumSampleCount = 400

    public init(modelPath: String, threads: Int = 1, libraryDirectory: String? = nil) throws(SherpaOnnxSpeakersError) {
        let model = try OnnxModelDescription.read(path: modelPath)
        let dimension = try SherpaOnnxModelCheck.embeddingModel(model, path: modelPath)
        let api = try SherpaOnnxSpeakerAPI.load(directory: libraryDirectory ?? VendorLocation.sherpaLibraryDirectory())
        let created: OpaquePointer? = modelPath.withCString { path in
            "cpu".withCString { provider in
                var config = SherpaOnnxSpeakerEmbeddingExtractorConfig(model: path, num_threads: Int32(max(1, threads)), debug: 0, provider: provider)
                return api.library.serialisingLifecycle { api.createExtractor(&config) }
            }
        }
        guard let created else {
            throw SherpaOnnxSpeakersError(.createFailed, "sherpa-onnx could not load the embedding model \(modelPath) (it printed why on stderr)")
        }
        let handle = created
        let reported = Int(api.extractorDimension(handle))
        guard reported == dimension else {
            api.library.serialisingLifecycle { api.destroyExtractor(handle) }
            throw SherpaOnnxSpeakersError(.invalidModel, "\(modelPath): sherpa-onnx reports \(reported) dimensions, its metadata \(dimension)")
        }
        self.modelPath = modelPath
        self.dimension = dimension
        self.model = model
        self.api = api
        self.handle = handle
    }

    deinit {
        api.library.serialisingLifecycle { api.destroyExtractor(handle) }
    }

    /// The embedding of 16 kHz mono samples. Throws `.invalidAudio` for audio too short or non-finite.
    public func embed(_ samples: UnsafeBufferPointer<Float>, sampleRate: Int = 16_000) throws(SherpaOnnxSpeakersError) -> [Float] {
        guard samples.count >= Self.minimumSampleCount else {
            throw SherpaOnnxSpeakersError(.invalidAudio, "\(samples.count) samples; an embedding needs at least \(Self.minimumSampleCount)")
        }
        guard samples.allSatisfy(\.isFinite) else { throw SherpaOnnxSpeakersError(.invalidAudio, "the audio holds a non-finite sample") }
        let extractor = handle
        guard let stream = api.createStream(extractor) else {
            throw SherpaOnnxSpeakersError(.createFailed, "sherpa-onnx could not create a stream")
        }
        defer { api.destroyStream(stream) }
        api.acceptWaveform(stream, Int32(sampleRate), samples.baseAddress, Int32(samples.count))
        api.inputFinished(stream)
        // A stream that is not ready gives an embedding of zeros, not an error: check first.
        guard api.isReady(extractor, stream) != 0 else {
            throw SherpaOnnxSpeakersError(.invalidAudio, "\(samples.count) samples are too few for this model's features")
        }
        guard let values = api.computeEmbedding(extractor, stream) else {
            throw SherpaOnnxSpeakersError(.createFailed, "sherpa-onnx computed no embedding")
        }
        defer { api.destroyEmbedding(values) }
        return Array(UnsafeBufferPointer(start: values, count: dimension))
    }

    public func embed(_ samples: [Float], sampleRate: Int = 16_000) throws(SherpaOnnxSpeakersError) -> [Float] {
        try samples.withUnsafeBufferPointer { (buffer) throws(SherpaOnnxSpeakersError) in try embed(buffer, sampleRate: sampleRate) }
    }
}
