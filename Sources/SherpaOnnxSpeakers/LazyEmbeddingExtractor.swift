import Synchronization

/// An embedding model checked now and opened by its first use.
///
/// Why: every server loads every plugin in its worker, and most servers never start a session of a
/// given model. Opening a model (CAM++ is 27 MB of weights, tens of MB resident once onnxruntime has
/// it) at load would make every server start and every worker's memory pay for it. Checking is cheap
/// (the file's metadata names an embedding model and its size), so a missing or wrong file is still
/// reported at load.
public final class LazyEmbeddingExtractor: Sendable {
    public let modelPath: String
    /// The embedding's size, from the model's metadata: known before the model is opened, so profiles
    /// from another embedding space can be told apart.
    public let dimension: Int
    private let threads: Int
    /// The extractor once made, or why it could not be (kept: a file that failed once fails again).
    private let extractor = Mutex<Result<SpeakerEmbeddingExtractor, SherpaOnnxSpeakersError>?>(nil)

    /// Checks the file without opening it.
    public init(modelPath: String, threads: Int = 1) throws(SherpaOnnxSpeakersError) {
        dimension = try SherpaOnnxModelCheck.embeddingModel(OnnxModelDescription.read(path: modelPath), path: modelPath)
        self.modelPath = modelPath
        self.threads = threads
    }

    /// Whether the model has been opened (by `loaded()`), successfully or not.
    public var isOpened: Bool { extractor.withLock { $0 != nil } }

    /// Opens the model if it is not open yet (the first caller pays, once per process).
    public func loaded() throws(SherpaOnnxSpeakersError) -> SpeakerEmbeddingExtractor {
        let result = extractor.withLock { slot in
            if let slot { return slot }
            let made: Result<SpeakerEmbeddingExtractor, SherpaOnnxSpeakersError>
            do throws(SherpaOnnxSpeakersError) {
                made = .success(try SpeakerEmbeddingExtractor(modelPath: modelPath, threads: threads))
            } catch {
                made = .failure(error)
            }
            slot = made
            return made
        }
        return try result.get()
    }
}
